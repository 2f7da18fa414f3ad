import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { kubeRequestsByVerb, metricsLines, writeTotal } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  kubectl,
  logCount,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { waitForReconciles } from './wait-for-reconciles.js';

// Issue #39: a reconcile at rest that finds the ApplySet, its revision and every object it holds as
// its last run in full left them (their resourceVersions) answers with that run's outcome: it reads
// the objects (or hears their versions from a watch), but neither the files from Git nor a merge. It
// must never hide a change: an object edited or deleted on the cluster, a new commit, each is applied
// by the next reconcile.

const serviceAccountYaml = (name: string) =>
  `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${name}\n`;

async function unchangedTotal(controller: ControllerProcess): Promise<number> {
  const name = 'applyset_reconciles_unchanged_total ';
  const line = (await metricsLines(controller)).find((each) => each.startsWith(name));
  if (line === undefined) throw new Error(`${name.trim()} is not in /metrics`);
  return Number(line.slice(name.length));
}

/** The ApplySet of a suite, its namespace, Git server and controller. */
interface SetAtRest {
  readonly c: ReturnType<typeof cluster>;
  readonly namespace: string;
  git: GitTestServer;
  controller: ControllerProcess;
  /** Waits for `count` reconciles after the ones logged so far. */
  reconciles(count: number, what: string): Promise<void>;
}

/**
 * One ApplySet of two ConfigMaps and a ServiceAccount, every 2 s, with its controller (`args` added to
 * its command line), made before the suite's tests and stopped after them.
 */
function setAtRest(name: string, args: readonly string[] = []): SetAtRest {
  const c = cluster();
  const namespace = uniqueName(`e2e-${name}`);
  const key = `${namespace}/${name}`;
  // Filled in by beforeAll, before any test reads them.
  const set = {
    c,
    namespace,
    reconciles: async (count: number, what: string) => {
      const logged = logCount(set.controller, key, 'reconciled');
      await waitForReconciles(set.controller, key, logged + count, what, 30_000);
    },
  } as SetAtRest;

  beforeAll(async () => {
    const files = {
      'a.yaml': configMapYaml('a', { v: '1' }),
      'b.yaml': configMapYaml('b', { v: '1' }),
      'bot.yaml': serviceAccountYaml('bot'),
    };
    ({ git: set.git, controller: set.controller } = await startControllerWithRepository(c, namespace, files, {
      args,
    }));
    await createApplySet(c, namespace, name, { url: set.git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, name, await set.git.revParse('main'), 60_000);
  });

  afterAll(() => stopControllersAndGit(set.git));
  return set;
}

/** The drift a set at rest must still see: an object edited, an object deleted. */
function itCorrectsDrift(set: SetAtRest): void {
  it('corrects an object edited on the cluster on the next reconcile', async () => {
    await set.reconciles(2, 'reconciles at rest');
    await kubectl([
      '-n',
      set.namespace,
      'patch',
      'configmap',
      'a',
      '--type=merge',
      '-p',
      '{"data":{"v":"edited"}}',
    ]);
    expect(await configMapData(set.c, set.namespace, 'a')).toEqual({ v: 'edited' });
    await waitFor('configmap a set back to the file', async () =>
      (await configMapData(set.c, set.namespace, 'a'))?.['v'] === '1' ? true : undefined,
    );
  });

  it('creates again an object deleted from the cluster', async () => {
    await set.reconciles(2, 'reconciles at rest');
    await kubectl(['-n', set.namespace, 'delete', 'serviceaccount', 'bot']);
    await waitFor('serviceaccount bot created again', async () => {
      const out = await kubectl(['-n', set.namespace, 'get', 'serviceaccount', 'bot', '-o', 'name']);
      return out.trim() === 'serviceaccount/bot' ? true : undefined;
    });
  });
}

describe('an ApplySet whose objects did not change since its last run', () => {
  const set = setAtRest('steady');

  it('is answered from that run: its objects are read, nothing is written, nothing applied again', async () => {
    // The first runs after Ready write their event and status; the next one is remembered.
    await set.reconciles(2, 'the first reconciles after Ready');
    const unchanged = await unchangedTotal(set.controller);
    const writes = writeTotal(await kubeRequestsByVerb(set.controller));
    const reads = (await kubeRequestsByVerb(set.controller)).GET;
    await set.reconciles(3, 'three reconciles on the interval');
    expect(await unchangedTotal(set.controller)).toBeGreaterThanOrEqual(unchanged + 2);
    expect(writeTotal(await kubeRequestsByVerb(set.controller))).toBe(writes);
    // Each reconcile still reads the objects: drift is seen on the interval, as before.
    expect((await kubeRequestsByVerb(set.controller)).GET).toBeGreaterThanOrEqual(reads + 3 * 2);
  });

  itCorrectsDrift(set);

  it('applies a new commit', async () => {
    await set.reconciles(2, 'reconciles at rest');
    const sha = await set.git.writeFiles({ 'b.yaml': configMapYaml('b', { v: '2' }) });
    await waitForAppliedCommit(set.c, set.namespace, 'steady', sha, 60_000);
    expect(await configMapData(set.c, set.namespace, 'b')).toEqual({ v: '2' });
  });

  it('goes back to answering from its last run once the change is applied', async () => {
    await set.reconciles(2, 'the runs in full after the changes');
    const unchanged = await unchangedTotal(set.controller);
    await set.reconciles(3, 'three reconciles on the interval');
    expect(await unchangedTotal(set.controller)).toBeGreaterThanOrEqual(unchanged + 2);
  });
});

// The same, with the objects' versions heard from watches opened as the set's account
// (--member-watch-min-sets 1: one set is enough to open them) instead of read with a GET each.
describe('an ApplySet at rest whose objects are watched', () => {
  const set = setAtRest('watched', ['--member-watch-min-sets', '1']);

  it('is answered from its last run without a GET of its objects', async () => {
    const { controller } = set;
    // The first runs after Ready write; the next is remembered and opens the watches; then they answer.
    await set.reconciles(4, 'the first reconciles after Ready');
    const opened = () => controller.logs.filter((line) => line['msg'] === 'member watch opened').length;
    await waitFor('both watches opened', async () => (opened() >= 2 ? true : undefined));
    // One for the ConfigMaps, one for the ServiceAccounts, as /metrics tells an operator.
    expect(await metricsLines(controller)).toContain('applyset_member_watches 2');
    await set.reconciles(1, 'a reconcile after the watches listed');
    const unchanged = await unchangedTotal(controller);
    const before = await kubeRequestsByVerb(controller);
    await set.reconciles(3, 'three reconciles on the interval');
    const after = await kubeRequestsByVerb(controller);
    expect(await unchangedTotal(controller)).toBeGreaterThanOrEqual(unchanged + 3);
    expect(writeTotal(after)).toBe(writeTotal(before));
    // Read as the engine reads, each of the three would send two: a LIST of the two ConfigMaps, a GET
    // of the ServiceAccount.
    expect(after.GET - before.GET).toBeLessThan(3);
  });

  itCorrectsDrift(set);
});
