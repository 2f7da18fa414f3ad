import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  kubectl,
  logCount,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { webDeploymentYaml } from './e2e-manifests.js';

// The controller as its own process against the real control plane and a real Git server: what a user
// sees after pushing commits, editing objects by hand and suspending an ApplySet.

describe('the controller keeps a namespace in sync with Git', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-sync');
  const key = `${namespace}/app`;
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'app/settings.yaml': configMapYaml('settings', { color: 'blue', size: 'M' }),
      'app/legacy.yaml': configMapYaml('legacy', { mode: 'old' }),
      'app/web.yaml': webDeploymentYaml,
      'README.md': 'not a manifest\n',
    }));
    await createApplySet(c, namespace, 'app', { url: git.url, path: 'app', interval: '5s' });
  });

  afterAll(() => stopControllersAndGit(git));

  it('applies the branch, holds the finalizer and reports the revision', async () => {
    const sha = await git.revParse('main');
    const view = await waitForReady(c, namespace, 'app', 'True');
    expect(view.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    expect(view.status?.observedGeneration).toBe(view.metadata.generation);
    expect(view.status?.summary).toMatchObject({ applied: 3, pruned: 0, failed: 0 });
    expect(view.metadata.finalizers).toContain('applyset.dev/finalizer');
    expect(await configMapData(c, namespace, 'settings')).toEqual({ color: 'blue', size: 'M' });
    expect(await configMapData(c, namespace, 'legacy')).toEqual({ mode: 'old' });
    const events = await c.core.listNamespacedEvent({ namespace });
    expect(events.items.map((e) => `${e.reason}: ${e.message}`)).toContainEqual(
      expect.stringMatching(/^ReconciliationSucceeded: Applied revision: main@sha1:[0-9a-f]{40}: 3 created/),
    );
  });

  it('applies a new commit within one interval, and prunes a removed manifest', async () => {
    await git.writeFiles({ 'app/settings.yaml': configMapYaml('settings', { color: 'green', size: 'M' }) });
    const sha = await git.deleteFiles(['app/legacy.yaml']);
    const view = await waitForAppliedCommit(c, namespace, 'app', sha, 15_000);
    expect(view.status?.summary).toMatchObject({ applied: 1, unchanged: 1, pruned: 1 });
    expect(await configMapData(c, namespace, 'settings')).toEqual({ color: 'green', size: 'M' });
    expect(await configMapData(c, namespace, 'legacy')).toBeUndefined();
  });

  it('corrects a hand edit of a managed field, and leaves replicas set by another writer', async () => {
    await kubectl([
      '-n',
      namespace,
      'patch',
      'configmap',
      'settings',
      '--type',
      'merge',
      '-p',
      '{"data":{"color":"red","extra":"kept"}}',
    ]);
    await kubectl(['-n', namespace, 'scale', 'deployment', 'web', '--replicas', '3']);
    await waitFor(
      'the hand edit to be corrected',
      async () => {
        const data = await configMapData(c, namespace, 'settings');
        return data?.['color'] === 'green' ? data : undefined;
      },
      15_000,
    );
    // A field no manifest mentions belongs to whoever set it, as kubectl apply's three-way merge says.
    expect((await configMapData(c, namespace, 'settings'))?.['extra']).toBe('kept');
    const web = await c.apps.readNamespacedDeployment({ namespace, name: 'web' });
    expect(web.spec?.replicas).toBe(3);
  });

  it('changes nothing while suspended, and catches up when resumed', async () => {
    const suspendedBefore = logCount(controller, key, 'suspended');
    await patchApplySet(namespace, 'app', { spec: { suspend: true } });
    await waitFor('a reconcile to see the suspension', async () =>
      logCount(controller, key, 'suspended') > suspendedBefore ? true : undefined,
    );
    const sha = await git.writeFiles({
      'app/settings.yaml': configMapYaml('settings', { color: 'yellow', size: 'M' }),
    });
    const seen = logCount(controller, key, 'suspended');
    await patchApplySet(namespace, 'app', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': new Date().toISOString() } },
    });
    // The requested reconcile ran, and did nothing.
    await waitFor('the requested reconcile', async () =>
      logCount(controller, key, 'suspended') > seen ? true : undefined,
    );
    expect((await configMapData(c, namespace, 'settings'))?.['color']).toBe('green');

    await patchApplySet(namespace, 'app', { spec: { suspend: false } });
    await waitForAppliedCommit(c, namespace, 'app', sha, 15_000);
    expect((await configMapData(c, namespace, 'settings'))?.['color']).toBe('yellow');
  });

  it('records the handled reconcile request in the status', async () => {
    const requestedAt = new Date().toISOString();
    await patchApplySet(namespace, 'app', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': requestedAt } },
    });
    const view = await waitFor('lastHandledReconcileAt', async () => {
      const v = await getApplySet(c, namespace, 'app');
      return v?.status?.lastHandledReconcileAt === requestedAt ? v : undefined;
    });
    expect(view.status?.lastHandledReconcileAt).toBe(requestedAt);
  });
});
