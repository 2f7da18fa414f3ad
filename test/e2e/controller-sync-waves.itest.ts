import * as k8s from '@kubernetes/client-node';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { finishJob, jobYaml, readJob as readJobIn } from './job-status.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  getApplySet,
  GROUP,
  PLURAL,
  VERSION,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issue #38: sync waves on ordinary objects. A Job of wave -1 (Argo CD's sync-wave annotation, as a
// repository moved from Argo CD has it) must be healthy before wave 0 is applied, and wave 0 before
// wave 1 (applyset.dev/wave). This profile runs no Job controller: the test plays it, writing the Job's
// status. A wave that does not become healthy within spec.timeout stops the run, with its reason, and
// nothing after it is written.

const job = jobYaml;

const configMap = (name: string, annotations: Record<string, string> = {}) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  annotations: ${JSON.stringify(annotations)}
data: {wave: "${annotations['applyset.dev/wave'] ?? '0'}"}
`;

const files = {
  'ordered/migrate.yaml': job('migrate', { 'argocd.argoproj.io/sync-wave': '-1' }),
  'ordered/app.yaml': configMap('app'),
  'ordered/smoke.yaml': configMap('smoke', { 'applyset.dev/wave': '1' }),
  'stuck/stuck.yaml': job('stuck', {}),
  'stuck/late.yaml': configMap('late', { 'applyset.dev/wave': '1' }),
  'hook/pre.yaml': job('never', { 'applyset.dev/hook': 'PreSync' }),
  'hook/app.yaml': configMap('held'),
};

describe('sync waves of an ApplySet', () => {
  const c = cluster();
  const batch = c.kc.makeApiClient(k8s.BatchV1Api);
  const namespace = uniqueName('e2e-waves');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, files));
  });

  afterAll(() => stopControllersAndGit(git));

  const readJob = (name: string) => readJobIn(batch, namespace, name);
  const completeJob = (name: string) => finishJob(batch, namespace, name, 'Complete');

  const create = (name: string, path: string, timeout: string) =>
    c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: (() => {
        const body = applySetBody(namespace, name, { url: git.url, path, interval: '1h' });
        return { ...body, spec: { ...(body['spec'] as object), timeout } };
      })(),
    });

  const events = async (name: string, reason: string) =>
    (await c.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items
      .filter((event) => event.reason === reason)
      .map((event) => event.message ?? '');

  it('applies each wave once the one before it is healthy, the status and events saying which wave it waits for', async () => {
    await create('ordered', 'ordered', '2m');
    await waitFor('the Job of wave -1', () => readJob('migrate'), 60_000);
    // The status says which wave the run waits for, and on what, while the Job is unfinished.
    const waiting = await waitFor(
      'the status naming the wave waited for',
      async () => {
        const message = condition(await getApplySet(c, namespace, 'ordered'), 'Reconciling')?.message;
        return message?.startsWith('sync wave -1') === true ? message : undefined;
      },
      60_000,
    );
    expect(waiting).toMatch(
      /^sync wave -1 \(1 of 3\) applied; wave 0 waits until it is healthy: waiting for job\.batch\/migrate: /,
    );
    expect(await events('ordered', 'SyncWaveProgressing')).toEqual([
      expect.stringMatching(/^sync wave -1 \(1 of 3\) applied, waiting for it to be healthy before wave 0: /),
    ]);
    // Wave -1 is not healthy yet: nothing of wave 0 or 1 exists.
    expect(await configMapData(c, namespace, 'app')).toBeUndefined();
    expect(await configMapData(c, namespace, 'smoke')).toBeUndefined();
    await completeJob('migrate');
    await waitForAppliedCommit(c, namespace, 'ordered', await git.revParse('main'), 90_000);
    expect(await configMapData(c, namespace, 'app')).toEqual({ wave: '0' });
    expect(await configMapData(c, namespace, 'smoke')).toEqual({ wave: '1' });
    expect(await events('ordered', 'SyncWaveHealthy')).toEqual(
      expect.arrayContaining([
        'sync wave -1 (1 of 3) is healthy (1 objects); applying wave 0',
        'sync wave 0 (2 of 3) is healthy (1 objects); applying wave 1',
      ]),
    );
  });

  it('stops at a wave that is not healthy within spec.timeout, saying which and why', async () => {
    await create('stuck', 'stuck', '8s');
    const view = await waitForReady(
      c,
      namespace,
      'stuck',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'SyncWaveNotHealthy',
      90_000,
    );
    expect(condition(view, 'Ready')?.message).toMatch(
      /^sync wave 0 is not healthy, so the waves after it were not applied and nothing was pruned: not healthy within spec\.timeout \(8 s\): job\.batch\/stuck -n e2e-waves-\S+ is InProgress/,
    );
    expect(await configMapData(c, namespace, 'late')).toBeUndefined();
    // Healthy at last: the next run goes on to wave 1.
    await completeJob('stuck');
    await waitForAppliedCommit(c, namespace, 'stuck', await git.revParse('main'), 90_000);
    expect(await configMapData(c, namespace, 'late')).toEqual({ wave: '1' });
  });

  it('fails a PreSync hook that never finishes at spec.timeout, with its exact condition, writing nothing', async () => {
    await create('hooked', 'hook', '20s');
    // While the hook runs, the status says which phase and which hook.
    await waitFor(
      'the status naming the PreSync hook running',
      async () => {
        const message = condition(await getApplySet(c, namespace, 'hooked'), 'Reconciling')?.message;
        return message === `running PreSync hooks: job.batch/never -n ${namespace}` ? message : undefined;
      },
      60_000,
    );
    const view = await waitForReady(
      c,
      namespace,
      'hooked',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'HookFailed',
      90_000,
    );
    expect(condition(view, 'Ready')?.message).toMatch(
      /^PreSync hook job\.batch\/never -n e2e-waves-\S+ failed: did not finish within spec\.timeout \(InProgress: /,
    );
    expect(await configMapData(c, namespace, 'held')).toBeUndefined();
  });
});
