import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  filesOf,
  serverNoOpObjects,
  webhookConfigurationName,
  type ServerNoOpObject,
} from '../apply/server-no-op-manifests.js';
import {
  cluster,
  createApplySet,
  getApplySet,
  httpGet,
  kubectl,
  logCount,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { kubeRequestsByVerb, writesByVerb } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { grantClusterRules } from './default-deployer.js';
import { waitForReconciles } from './wait-for-reconciles.js';

// Issue #13 point 3, end to end: objects whose apply patch the server takes without a change (kubectl
// says `configured` for them on every apply, see test/apply/server-no-op.itest.ts for that premise).
// The controller's interval re-apply reports them unchanged, and once the server has ignored a patch it
// does not send it again while the object stays at that resourceVersion: at rest, no PATCH at all.

async function resourceVersions(
  namespace: string,
  objects: readonly ServerNoOpObject[],
): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  for (const object of objects) {
    const args = ['-n', namespace, 'get', object.kubectlRef, '-o', 'jsonpath={.metadata.resourceVersion}'];
    versions[object.kind] = await kubectl(args);
  }
  return versions;
}

/** The `counts` of every `reconciled` line the controller logged for `key`, in order. */
function reconciledCounts(controller: ControllerProcess, key: string): Record<string, number>[] {
  return controller.logs
    .filter((line) => line['applyset'] === key && line['msg'] === 'reconciled')
    .map((line) => line['counts'] as Record<string, number>);
}

describe('objects the server takes without a change, reconciled by the controller', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-noop');
  const objects = serverNoOpObjects(namespace, 'e2e');
  let git: GitTestServer;
  let controller: ControllerProcess;
  let revokeClusterRules: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // The ValidatingWebhookConfiguration is cluster-scoped: the namespace's deployer is granted that kind.
    revokeClusterRules = await grantClusterRules(namespace, [
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    ({ git, controller } = await startControllerWithRepository(c, namespace, filesOf(objects)));
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    // Cluster-scoped, so the namespace's deletion does not take it.
    const webhook = webhookConfigurationName(namespace, 'e2e');
    await kubectl(['delete', 'validatingwebhookconfiguration', webhook, '--ignore-not-found']);
    await revokeClusterRules?.();
  });

  it('are unchanged on every interval reconcile, and after the first one no write is sent', async () => {
    await createApplySet(c, namespace, 'noop', { url: git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'noop', await git.revParse('main'), 60_000);
    const key = `${namespace}/noop`;
    const created = await resourceVersions(namespace, objects);

    // The first interval reconcile sends each patch once (only the server can tell it changes
    // nothing), and no status: a run that changed nothing keeps the summary. Past it, at rest.
    const settled = logCount(controller, key, 'reconciled') + 1;
    await waitForReconciles(controller, key, settled + 1, 'the first interval reconcile to be over', 30_000);
    const before = writesByVerb(await kubeRequestsByVerb(controller));
    const reconciled = logCount(controller, key, 'reconciled');
    await waitForReconciles(controller, key, reconciled + 3, 'three more reconciles on the interval', 30_000);
    expect(writesByVerb(await kubeRequestsByVerb(controller))).toEqual(before);
    expect(await resourceVersions(namespace, objects)).toEqual(created);

    // Reported unchanged by every run after the one that created them: log, status and metrics.
    const [first, ...later] = reconciledCounts(controller, key);
    expect(first).toMatchObject({ created: objects.length, configured: 0 });
    expect(later.length).toBeGreaterThanOrEqual(4);
    for (const counts of later) {
      expect(counts).toMatchObject({ created: 0, configured: 0, unchanged: objects.length, failed: 0 });
    }
    const view = await getApplySet(c, namespace, 'noop');
    // The summary is the last run that changed something: the one that created them.
    expect(view?.status?.summary).toMatchObject({ applied: objects.length, unchanged: 0, failed: 0 });
    const { body } = await httpGet(controller.port, '/metrics');
    expect(body).toContain(`applyset_objects_total{action="created"} ${objects.length}`);
    expect(body).not.toMatch(/^applyset_objects_total\{action="configured"\} [1-9]/m);
    expect(body).toMatch(/^applyset_objects_total\{action="unchanged"\} [1-9]/m);
  });
});
