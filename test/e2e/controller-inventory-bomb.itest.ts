import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  httpGet,
  kubectl,
  logCount,
  startController,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';
import { assertAlive, MIB, peakRssBytes } from './process-health.js';

// A tenant may patch its own ApplySet, and so its inventory annotations. A gzip bomb there (finding 4
// of issue #23) must stall that ApplySet alone: the controller stays up, within the chart's memory
// limit, and keeps reconciling the others.

const COMPRESSED_KEY = 'applyset.dev/last-applied-objects-gzip';
const PLAIN_KEY = 'kubectl.kubernetes.io/last-applied-objects';

/** 180 gzip members of 1 MiB of newlines each: about 240 KB of base64, 180 MiB inflated. */
function gzipBomb(): string {
  const member = gzipSync(Buffer.alloc(MIB, '\n'), { level: 9 });
  return Buffer.concat(Array.from({ length: 180 }, () => member)).toString('base64');
}

/** A merge patch too large for a command line: kubectl reads it from a file. */
async function patchFromFile(namespace: string, name: string, patch: object): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'applyset-bomb-'));
  try {
    const file = path.join(dir, 'patch.json');
    await writeFile(file, JSON.stringify(patch));
    await kubectl([
      '-n',
      namespace,
      'patch',
      'applysets.applyset.dev',
      name,
      '--type',
      'merge',
      '--patch-file',
      file,
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// The heap bounded like the chart's 512Mi container, so a blow-up ends the process here as it would
// end the pod, instead of taking gigabytes from the machine first. The Git server is on loopback, which
// the flag admits explicitly (loopback sources may be refused by default).
const controllerOptions = {
  env: { NODE_OPTIONS: '--max-old-space-size=384' },
  args: ['--allowed-source-hosts', '127.0.0.1'],
};

async function expectAliveAndSmall(controller: ControllerProcess): Promise<void> {
  assertAlive(controller);
  expect((await httpGet(controller.port, '/healthz')).status).toBe(200);
  const pid = controller.child.pid;
  if (pid === undefined) throw new Error('the controller has no pid');
  expect(await peakRssBytes(pid)).toBeLessThan(512 * MIB);
}

describe('the controller and a gzip bomb in an inventory annotation', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-gzbomb');
  const account = 'tenant';
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(
      c,
      namespace,
      {
        'healthy/cm.yaml': configMapYaml('healthy', { round: '1' }),
        'bombed/cm.yaml': configMapYaml('bombed', { round: '1' }),
      },
      controllerOptions,
    ));
    await createTenantAccount(c, namespace, account, [coreRule('configmaps')]);
  });

  afterAll(() => stopControllersAndGit(git));

  it('stalls the bombed ApplySet as InventoryTooLarge, applies and prunes nothing of it, and the others go on', async () => {
    const sets = { url: git.url, serviceAccountName: account };
    await createApplySet(c, namespace, 'bombed', { ...sets, path: 'bombed' });
    await createApplySet(c, namespace, 'healthy', { ...sets, path: 'healthy' });
    await waitForReady(c, namespace, 'bombed', 'True');
    await waitForReady(c, namespace, 'healthy', 'True');

    const bomb = gzipBomb();
    expect(bomb.length).toBeLessThan(256 * 1024);
    await patchFromFile(namespace, 'bombed', {
      metadata: {
        annotations: {
          [PLAIN_KEY]: `compressed-in-${COMPRESSED_KEY}`,
          [COMPRESSED_KEY]: bomb,
          'applyset.dev/reconcile-requested-at': 'bomb',
        },
      },
    });
    // The next revision would change the bombed set's ConfigMap: it must not be applied.
    const sha = await git.writeFiles({
      'healthy/cm.yaml': configMapYaml('healthy', { round: '2' }),
      'bombed/cm.yaml': configMapYaml('bombed', { round: '2' }),
    });

    const view = await waitFor(`ApplySet ${namespace}/bombed Stalled`, async () => {
      assertAlive(controller);
      const current = await getApplySet(c, namespace, 'bombed');
      return condition(current, 'Stalled')?.status === 'True' ? current : undefined;
    });
    expect(condition(view, 'Stalled')?.reason).toBe('InventoryTooLarge');
    expect(condition(view, 'Ready')?.message).toContain(
      `annotation ${COMPRESSED_KEY} decompresses past 8 MiB; nothing was applied or pruned`,
    );
    expect(await configMapData(c, namespace, 'bombed')).toEqual({ round: '1' });

    // The other ApplySet of the same controller follows its repository.
    await waitForAppliedCommit(c, namespace, 'healthy', sha);
    expect(await configMapData(c, namespace, 'healthy')).toEqual({ round: '2' });

    await expectAliveAndSmall(controller);
  });

  it('comes back after a restart with the bomb still there, and stalls that ApplySet again', async () => {
    await controller.stop();
    controller = await startController({ namespace, ...controllerOptions });
    const key = `${namespace}/bombed`;
    // The new process reads every ApplySet as it starts: the bombed one too, and survives it.
    await waitFor(`a reconcile of ${key} by the new controller`, async () => {
      assertAlive(controller);
      return logCount(controller, key, 'reconcile finished') > 0 ? true : undefined;
    });
    const sha = await git.writeFiles({ 'healthy/cm.yaml': configMapYaml('healthy', { round: '3' }) });
    await waitForAppliedCommit(c, namespace, 'healthy', sha);
    expect(condition(await getApplySet(c, namespace, 'bombed'), 'Stalled')?.reason).toBe('InventoryTooLarge');
    await expectAliveAndSmall(controller);
  });
});
