import * as k8s from '@kubernetes/client-node';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { finishJob as finishJobIn, jobYaml, readJob as readJobIn } from './job-status.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  patchApplySet,
  GROUP,
  PLURAL,
  VERSION,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issue #38: PreDelete hooks. Deleting an ApplySet runs the PreDelete hooks of the revision it last
// applied before any of its objects is deleted (this profile runs no Job controller: the test plays
// it, writing the Job's status). A hook that fails keeps every object and the finalizer, says why in
// the status, and the deletion is retried until the hook succeeds; a revision that can no longer be
// read keeps them too, until the ApplySet is told to skip its PreDelete hooks.

const tree = (jobName: string) => ({
  'a/app.yaml': configMapYaml('app-a', { set: 'a' }),
  'a/backup.yaml': jobYaml(jobName, {
    'argocd.argoproj.io/hook': 'PreDelete',
    'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded',
  }),
  'b/app.yaml': configMapYaml('app-b', { set: 'b' }),
  'b/backup.yaml': jobYaml('backup-b', { 'helm.sh/hook': 'pre-delete' }),
  'c/app.yaml': configMapYaml('app-c', { set: 'c' }),
  'c/backup.yaml': jobYaml('backup-c', { 'applyset.dev/hook': 'PreDelete' }),
});

describe('PreDelete hooks of an ApplySet', () => {
  const c = cluster();
  const batch = c.kc.makeApiClient(k8s.BatchV1Api);
  const namespace = uniqueName('e2e-predelete');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, tree('backup-a')));
  });

  afterAll(() => stopControllersAndGit(git));

  const readJob = (name: string) => readJobIn(batch, namespace, name);
  const finishJob = (name: string, outcome: 'Complete' | 'Failed') =>
    finishJobIn(batch, namespace, name, outcome);
  const gone = (what: string, read: () => Promise<unknown>) =>
    waitFor(what, async () => ((await read()) === undefined ? true : undefined), 60_000);
  const events = async (name: string, reason: string) =>
    (await c.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items
      .filter((event) => event.reason === reason)
      .map((event) => event.message ?? '');
  const deleteApplySet = (name: string) =>
    c.custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      name,
    });
  const applied = async (name: string, path: string) => {
    await createApplySet(c, namespace, name, { url: git.url, path, interval: '1h' });
    return waitForAppliedCommit(c, namespace, name, await git.revParse('main'), 60_000);
  };

  it('runs the PreDelete hook of the revision applied, before any object is deleted', async () => {
    const view = await applied('shop', 'a');
    expect((view?.status as { preDeleteHooks?: number } | undefined)?.preDeleteHooks).toBe(1);
    // A PreDelete hook is not run by a sync, nor skipped aloud.
    expect(await readJob('backup-a')).toBeUndefined();
    expect(await events('shop', 'HookSkipped')).toEqual([]);
    // The branch moves on (the hook renamed) and is not applied: the deletion runs the revision applied.
    await git.commitTree(tree('backup-a-renamed'));

    await deleteApplySet('shop');
    await waitFor('the PreDelete Job', () => readJob('backup-a'), 60_000);
    // The hook holds the deletion: the set's objects and the ApplySet are still there.
    expect(await configMapData(c, namespace, 'app-a')).toEqual({ set: 'a' });
    expect((await getApplySet(c, namespace, 'shop'))?.metadata.finalizers).toContain(
      'applyset.dev/finalizer',
    );
    await finishJob('backup-a', 'Complete');

    await gone('the ApplySet deleted', () => getApplySet(c, namespace, 'shop'));
    expect(await configMapData(c, namespace, 'app-a')).toBeUndefined();
    expect(await readJob('backup-a-renamed')).toBeUndefined();
    expect(await events('shop', 'HookSucceeded')).toContain(
      `PreDelete hook job.batch/backup-a -n ${namespace} finished`,
    );
  });

  it('keeps every object while the PreDelete hook fails, saying why, and deletes them once it succeeds', async () => {
    await applied('store', 'b');
    await deleteApplySet('store');
    await finishJob('backup-b', 'Failed');

    const message = `PreDelete hook job.batch/backup-b -n ${namespace} failed: Failed: Job has failed: BackoffLimitExceeded; the set's objects are kept until it succeeds`;
    const view = await waitForReady(
      c,
      namespace,
      'store',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'HookFailed',
      60_000,
    );
    expect(condition(view, 'Ready')?.message).toBe(message);
    expect(await events('store', 'HookFailed')).toContain(message);
    expect(view?.metadata.finalizers).toContain('applyset.dev/finalizer');
    expect(await configMapData(c, namespace, 'app-b')).toEqual({ set: 'b' });

    // Retried with back-off: the failed Job is replaced by a new run of the hook, which succeeds.
    await waitFor(
      'the PreDelete Job run again',
      async () => ((await readJob('backup-b'))?.status?.conditions === undefined ? true : undefined),
      60_000,
    );
    await finishJob('backup-b', 'Complete');
    await gone('the ApplySet deleted', () => getApplySet(c, namespace, 'store'));
    expect(await configMapData(c, namespace, 'app-b')).toBeUndefined();
  });

  it('keeps every object when the revision cannot be read, until told to skip the PreDelete hooks', async () => {
    const view = await applied('cafe', 'c');
    const revision = view?.status?.lastAppliedRevision ?? '';
    // The source goes away; the revision applied stays in the status.
    await patchApplySet(namespace, 'cafe', { spec: { source: { url: 'http://127.0.0.1:9/gone.git' } } });
    await deleteApplySet('cafe');

    const held = await waitForReady(
      c,
      namespace,
      'cafe',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'PreDeleteHooksNotRead',
      60_000,
    );
    const message = condition(held, 'Ready')?.message ?? '';
    expect(message.startsWith(`the PreDelete hooks of revision ${revision} could not be read: `)).toBe(true);
    expect(message).toContain(
      `; the set's objects are kept until they can be run (or annotate the ApplySet applyset.dev/skip-pre-delete-hooks: "true" to delete them without)`,
    );
    expect(await configMapData(c, namespace, 'app-c')).toEqual({ set: 'c' });

    await patchApplySet(namespace, 'cafe', {
      metadata: { annotations: { 'applyset.dev/skip-pre-delete-hooks': 'true' } },
    });
    await gone('the ApplySet deleted', () => getApplySet(c, namespace, 'cafe'));
    expect(await configMapData(c, namespace, 'app-c')).toBeUndefined();
    expect(await readJob('backup-c')).toBeUndefined();
  });
});
