import * as k8s from '@kubernetes/client-node';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { finishJob as finishJobIn, jobYaml, readJob as readJobIn } from './job-status.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  getApplySet,
  patchApplySet,
  GROUP,
  PLURAL,
  VERSION,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issues #36 and #38: hooks, as Argo CD and Helm annotate them. A PreSync Job holds the apply until it
// completes (this profile runs no Job controller nor kubelet: the test plays the Job's controller by
// writing its status, as a Job's controller would); a PostSync hook runs once the set is applied; a
// Helm test hook is skipped with a Warning event; hooks are never in the inventory; a failed PreSync
// stops the run before anything else is written, with its reason.

const job = jobYaml;

const files = (data: string) => ({
  'pre.yaml': job('migrate', {
    'argocd.argoproj.io/hook': 'PreSync',
    'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded',
  }),
  'app.yaml': configMapYaml('app', { version: data }),
  'post.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: smoke
  annotations: {helm.sh/hook: post-install, helm.sh/hook-weight: "5"}
data: {ran: "yes"}
`,
  'test.yaml': `apiVersion: v1
kind: Pod
metadata:
  name: connection-test
  annotations: {helm.sh/hook: test}
spec:
  containers: [{name: t, image: registry.example/busybox:v1}]
`,
});

describe('hooks of an ApplySet', () => {
  const c = cluster();
  const batch = c.kc.makeApiClient(k8s.BatchV1Api);
  const namespace = uniqueName('e2e-hooks');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, files('v1')));
  });

  afterAll(() => stopControllersAndGit(git));

  const readJob = (name: string) => readJobIn(batch, namespace, name);
  const finishJob = (name: string, outcome: 'Complete' | 'Failed') =>
    finishJobIn(batch, namespace, name, outcome);

  const events = async (reason: string) =>
    (await c.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=web' })).items
      .filter((event) => event.reason === reason)
      .map((event) => event.message ?? '');

  it('runs PreSync before the apply and PostSync after it, skips a test hook aloud, lists no hook', async () => {
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: applySetBody(namespace, 'web', { url: git.url, interval: '1h' }),
    });
    await waitFor('the PreSync Job', () => readJob('migrate'), 60_000);
    // The PreSync hook holds the apply: nothing of the set exists while it runs.
    expect(await configMapData(c, namespace, 'app')).toBeUndefined();
    await finishJob('migrate', 'Complete');

    await waitForAppliedCommit(c, namespace, 'web', await git.revParse('main'), 60_000);
    expect(await configMapData(c, namespace, 'app')).toEqual({ version: 'v1' });
    // PostSync ran (a ConfigMap is done once created), marked as this set's hook.
    const smoke = await c.core.readNamespacedConfigMap({ namespace, name: 'smoke' });
    expect(smoke.metadata?.annotations?.['applyset.dev/hook-of']).toMatch(/^applyset-.*-v1$/);
    // HookSucceeded: the Job was deleted once it completed.
    await waitFor(
      'the Job deleted',
      async () => ((await readJob('migrate')) === undefined ? true : undefined),
      30_000,
    );
    // The test hook is neither applied nor run, and a Warning says so.
    await expect(c.core.readNamespacedPod({ namespace, name: 'connection-test' })).rejects.toMatchObject({
      code: 404,
    });
    expect((await events('HookSkipped')).join('\n')).toContain(
      `pod/connection-test -n ${namespace} is not applied nor run: helm.sh/hook: test: test hooks are left out`,
    );
    expect(await events('HookSucceeded')).toEqual(
      expect.arrayContaining([
        `PreSync hook job.batch/migrate -n ${namespace} finished`,
        `PostSync hook configmap/smoke -n ${namespace} finished`,
      ]),
    );
    // Hooks are not the set's objects: the inventory lists only app.
    const view = await getApplySet(c, namespace, 'web');
    const inventory = view?.metadata.annotations?.['kubectl.kubernetes.io/last-applied-objects'] ?? '';
    expect(inventory).toContain('app');
    expect(inventory).not.toContain('migrate');
    expect(inventory).not.toContain('smoke');
  });

  it('stops at a failed PreSync hook, writing nothing else, with its reason', async () => {
    const sha = await git.commitTree(files('v2'));
    await patchApplySet(namespace, 'web', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': sha } },
    });
    await waitFor(
      'a new PreSync Job',
      async () => ((await readJob('migrate'))?.status?.conditions === undefined ? true : undefined),
      60_000,
    );
    await finishJob('migrate', 'Failed');
    const view = await waitForReady(
      c,
      namespace,
      'web',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'HookFailed',
      60_000,
    );
    expect(condition(view, 'Ready')?.message).toContain(
      `PreSync hook job.batch/migrate -n ${namespace} failed: Failed: Job has failed: BackoffLimitExceeded`,
    );
    // Nothing of the new revision was applied.
    expect(await configMapData(c, namespace, 'app')).toEqual({ version: 'v1' });
    // No HookSucceeded policy for a failure: the Job is kept for its logs.
    expect((await readJob('migrate'))?.status?.failed).toBe(1);
  });
});
