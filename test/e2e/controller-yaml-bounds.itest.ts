import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { nestedListBomb } from '../manifests/yaml-bombs.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  httpGet,
  logCount,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { assertAlive, MIB, peakRssBytes } from './process-health.js';

// A 1 KB "billion laughs" file in one ApplySet's repository must stall that ApplySet alone: the
// controller stays up, within its memory, and keeps reconciling the others.

describe('the controller and a YAML alias bomb', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-yaml');
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(
      c,
      namespace,
      {
        'healthy/cm.yaml': configMapYaml('healthy', { round: '1' }),
        'bomb/cm.yaml': configMapYaml('beside-the-bomb', { k: 'v' }),
        'bomb/laughs.yaml': nestedListBomb(),
      },
      // The heap bounded like the chart's 512Mi container, so a blow-up ends the process here as it
      // would end the pod, instead of taking gigabytes from the machine first.
      { env: { NODE_OPTIONS: '--max-old-space-size=384' } },
    ));
  });

  afterAll(() => stopControllersAndGit(git));

  it('stalls naming the file, applies nothing of the set, and the controller stays up and small', async () => {
    expect(Buffer.byteLength(nestedListBomb())).toBeLessThan(1024);
    await createApplySet(c, namespace, 'laughs', { url: git.url, path: 'bomb' });
    await createApplySet(c, namespace, 'healthy', { url: git.url, path: 'healthy' });

    const view = await waitFor(`ApplySet ${namespace}/laughs Stalled`, async () => {
      assertAlive(controller);
      const current = await getApplySet(c, namespace, 'laughs');
      return condition(current, 'Stalled')?.status === 'True' ? current : undefined;
    });
    expect(condition(view, 'Stalled')?.reason).toBe('InvalidManifests');
    expect(condition(view, 'Ready')?.message).toMatch(
      /bomb\/laughs\.yaml \(document 0\): document contains excessive aliasing/,
    );
    expect(view.status?.errors?.items).toEqual([
      expect.objectContaining({
        object: 'bomb/laughs.yaml',
        message: expect.stringContaining('excessive aliasing'),
      }),
    ]);
    // A refused revision writes nothing, not even the valid file beside the bomb.
    expect(await configMapData(c, namespace, 'beside-the-bomb')).toBeUndefined();
    await waitForReady(c, namespace, 'healthy', 'True');

    // Asked again and again, it reads the same file each time and refuses it each time.
    const key = `${namespace}/laughs`;
    for (let round = 1; round <= 3; round += 1) {
      const before = logCount(controller, key, 'reconcile finished');
      await patchApplySet(namespace, 'laughs', {
        metadata: { annotations: { 'applyset.dev/reconcile-requested-at': `round-${round}` } },
      });
      await waitFor(`reconcile ${round} of ${key}`, async () => {
        assertAlive(controller);
        return logCount(controller, key, 'reconcile finished') > before ? true : undefined;
      });
    }
    expect(condition(await getApplySet(c, namespace, 'laughs'), 'Stalled')?.reason).toBe('InvalidManifests');

    // The other ApplySet still follows its repository.
    const sha = await git.writeFiles({ 'healthy/cm.yaml': configMapYaml('healthy', { round: '2' }) });
    await waitForAppliedCommit(c, namespace, 'healthy', sha);
    expect(await configMapData(c, namespace, 'healthy')).toEqual({ round: '2' });

    assertAlive(controller);
    expect((await httpGet(controller.port, '/healthz')).status).toBe(200);
    const pid = controller.child.pid;
    if (pid === undefined) throw new Error('the controller has no pid');
    expect(await peakRssBytes(pid)).toBeLessThan(300 * MIB);
  });
});
