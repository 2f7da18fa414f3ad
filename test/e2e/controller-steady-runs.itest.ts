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
// the objects, but neither the files from Git nor a merge. It must never hide a change: an object
// edited or deleted on the cluster, a new commit, each is applied by the next reconcile.

const serviceAccountYaml = (name: string) =>
  `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${name}\n`;

async function unchangedTotal(controller: ControllerProcess): Promise<number> {
  const name = 'applyset_reconciles_unchanged_total ';
  const line = (await metricsLines(controller)).find((each) => each.startsWith(name));
  if (line === undefined) throw new Error(`${name.trim()} is not in /metrics`);
  return Number(line.slice(name.length));
}

describe('an ApplySet whose objects did not change since its last run', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-steady');
  const key = `${namespace}/steady`;
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'a.yaml': configMapYaml('a', { v: '1' }),
      'b.yaml': configMapYaml('b', { v: '1' }),
      'bot.yaml': serviceAccountYaml('bot'),
    }));
    await createApplySet(c, namespace, 'steady', { url: git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'steady', await git.revParse('main'), 60_000);
  });

  afterAll(() => stopControllersAndGit(git));

  /** Waits for `count` reconciles after the ones logged so far. */
  const reconciles = async (count: number, what: string) =>
    waitForReconciles(controller, key, logCount(controller, key, 'reconciled') + count, what, 30_000);

  it('is answered from that run: its objects are read, nothing is written, nothing applied again', async () => {
    // The first runs after Ready write their event and status; the next one is remembered.
    await reconciles(2, 'the first reconciles after Ready');
    const unchanged = await unchangedTotal(controller);
    const writes = writeTotal(await kubeRequestsByVerb(controller));
    const reads = (await kubeRequestsByVerb(controller)).GET;
    await reconciles(3, 'three reconciles on the interval');
    expect(await unchangedTotal(controller)).toBeGreaterThanOrEqual(unchanged + 2);
    expect(writeTotal(await kubeRequestsByVerb(controller))).toBe(writes);
    // Each reconcile still reads the objects: drift is seen on the interval, as before.
    expect((await kubeRequestsByVerb(controller)).GET).toBeGreaterThanOrEqual(reads + 3 * 2);
  });

  it('corrects an object edited on the cluster on the next reconcile', async () => {
    await reconciles(2, 'reconciles at rest');
    await kubectl([
      '-n',
      namespace,
      'patch',
      'configmap',
      'a',
      '--type=merge',
      '-p',
      '{"data":{"v":"edited"}}',
    ]);
    expect(await configMapData(c, namespace, 'a')).toEqual({ v: 'edited' });
    await waitFor('configmap a set back to the file', async () =>
      (await configMapData(c, namespace, 'a'))?.['v'] === '1' ? true : undefined,
    );
  });

  it('creates again an object deleted from the cluster', async () => {
    await reconciles(2, 'reconciles at rest');
    await kubectl(['-n', namespace, 'delete', 'serviceaccount', 'bot']);
    await waitFor('serviceaccount bot created again', async () => {
      const out = await kubectl(['-n', namespace, 'get', 'serviceaccount', 'bot', '-o', 'name']);
      return out.trim() === 'serviceaccount/bot' ? true : undefined;
    });
  });

  it('applies a new commit', async () => {
    await reconciles(2, 'reconciles at rest');
    const sha = await git.writeFiles({ 'b.yaml': configMapYaml('b', { v: '2' }) });
    await waitForAppliedCommit(c, namespace, 'steady', sha, 60_000);
    expect(await configMapData(c, namespace, 'b')).toEqual({ v: '2' });
  });

  it('goes back to answering from its last run once the change is applied', async () => {
    await reconciles(2, 'the runs in full after the changes');
    const unchanged = await unchangedTotal(controller);
    await reconciles(3, 'three reconciles on the interval');
    expect(await unchangedTotal(controller)).toBeGreaterThanOrEqual(unchanged + 2);
  });
});

// The same, with the objects' versions heard from watches opened as the set's account
// (--member-watch-min-sets 1: one set is enough to open them) instead of read with a GET each.
describe('an ApplySet at rest whose objects are watched', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-watched');
  const key = `${namespace}/watched`;
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(
      c,
      namespace,
      {
        'a.yaml': configMapYaml('a', { v: '1' }),
        'b.yaml': configMapYaml('b', { v: '1' }),
        'bot.yaml': serviceAccountYaml('bot'),
      },
      { args: ['--member-watch-min-sets', '1'] },
    ));
    await createApplySet(c, namespace, 'watched', { url: git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'watched', await git.revParse('main'), 60_000);
  });

  afterAll(() => stopControllersAndGit(git));

  const reconciles = async (count: number, what: string) =>
    waitForReconciles(controller, key, logCount(controller, key, 'reconciled') + count, what, 30_000);

  it('is answered from its last run without a GET of its objects', async () => {
    // The first runs after Ready write; the next is remembered and opens the watches; then they answer.
    await reconciles(4, 'the first reconciles after Ready');
    const opened = () => controller.logs.filter((line) => line['msg'] === 'member watch opened').length;
    await waitFor('both watches opened', async () => (opened() >= 2 ? true : undefined));
    // One for the ConfigMaps, one for the ServiceAccounts, as /metrics tells an operator.
    expect(await metricsLines(controller)).toContain('applyset_member_watches 2');
    await reconciles(1, 'a reconcile after the watches listed');
    const unchanged = await unchangedTotal(controller);
    const before = await kubeRequestsByVerb(controller);
    await reconciles(3, 'three reconciles on the interval');
    const after = await kubeRequestsByVerb(controller);
    expect(await unchangedTotal(controller)).toBeGreaterThanOrEqual(unchanged + 3);
    expect(writeTotal(after)).toBe(writeTotal(before));
    // Read as the engine reads, each of the three would send two: a LIST of the two ConfigMaps, a GET
    // of the ServiceAccount.
    expect(after.GET - before.GET).toBeLessThan(3);
  });

  it('corrects an object edited on the cluster', async () => {
    await reconciles(2, 'reconciles at rest');
    await kubectl([
      '-n',
      namespace,
      'patch',
      'configmap',
      'a',
      '--type=merge',
      '-p',
      '{"data":{"v":"edited"}}',
    ]);
    await waitFor('configmap a set back to the file', async () =>
      (await configMapData(c, namespace, 'a'))?.['v'] === '1' ? true : undefined,
    );
  });

  it('creates again an object deleted from the cluster', async () => {
    await reconciles(2, 'reconciles at rest');
    await kubectl(['-n', namespace, 'delete', 'serviceaccount', 'bot']);
    await waitFor('serviceaccount bot created again', async () => {
      const out = await kubectl(['-n', namespace, 'get', 'serviceaccount', 'bot', '-o', 'name']);
      return out.trim() === 'serviceaccount/bot' ? true : undefined;
    });
  });
});
