import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
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
  installCrd,
  kubectl,
  logCount,
  startController,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';

// Issue #13 point 3, end to end: objects whose apply patch the server takes without a change (kubectl
// says `configured` for them on every apply, see test/apply/server-no-op.itest.ts for that premise).
// The controller's interval re-apply reports them unchanged, and once the server has ignored a patch it
// does not send it again while the object stays at that resourceVersion: at rest, no PATCH at all.

/** The controller's own request counter, by verb. */
async function requestsByVerb(controller: ControllerProcess): Promise<Record<string, number>> {
  const { body } = await httpGet(controller.port, '/metrics');
  const counts: Record<string, number> = {};
  for (const line of body.split('\n')) {
    const match = /^applyset_kube_requests_total\{verb="([A-Z]+)"\} (\d+)/.exec(line);
    if (match !== null) counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

function writesOf(counts: Record<string, number>): Record<string, number> {
  const verbs = ['POST', 'PUT', 'PATCH', 'DELETE'];
  return Object.fromEntries(verbs.map((verb) => [verb, counts[verb] ?? 0]));
}

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

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    git = await startGitServer({ files: filesOf(objects) });
    controller = await startController({ namespace });
  });

  afterAll(async () => {
    await stopAllControllers();
    await git?.close();
    // Cluster-scoped, so the namespace's deletion does not take it.
    const webhook = webhookConfigurationName(namespace, 'e2e');
    await kubectl(['delete', 'validatingwebhookconfiguration', webhook, '--ignore-not-found']);
  });

  it('are unchanged on every interval reconcile, and after the first one no write is sent', async () => {
    await createApplySet(c, namespace, 'noop', { url: git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'noop', await git.revParse('main'), 60_000);
    const key = `${namespace}/noop`;
    const created = await resourceVersions(namespace, objects);

    // The first interval reconcile sends each patch once (only the server can tell it changes
    // nothing), and writes the status whose summary moved from applied to unchanged. Past it, at rest.
    const settled = logCount(controller, key, 'reconciled') + 1;
    await waitFor(
      'the first interval reconcile to be over',
      async () => (logCount(controller, key, 'reconciled') > settled ? true : undefined),
      30_000,
    );
    const before = writesOf(await requestsByVerb(controller));
    const reconciled = logCount(controller, key, 'reconciled');
    await waitFor(
      'three more reconciles on the interval',
      async () => (logCount(controller, key, 'reconciled') >= reconciled + 3 ? true : undefined),
      30_000,
    );
    expect(writesOf(await requestsByVerb(controller))).toEqual(before);
    expect(await resourceVersions(namespace, objects)).toEqual(created);

    // Reported unchanged by every run after the one that created them: log, status and metrics.
    const [first, ...later] = reconciledCounts(controller, key);
    expect(first).toMatchObject({ created: objects.length, configured: 0 });
    expect(later.length).toBeGreaterThanOrEqual(4);
    for (const counts of later) {
      expect(counts).toMatchObject({ created: 0, configured: 0, unchanged: objects.length, failed: 0 });
    }
    const view = await getApplySet(c, namespace, 'noop');
    expect(view?.status?.summary).toMatchObject({ applied: 0, unchanged: objects.length, failed: 0 });
    const { body } = await httpGet(controller.port, '/metrics');
    expect(body).toContain(`applyset_objects_total{action="created"} ${objects.length}`);
    expect(body).not.toMatch(/^applyset_objects_total\{action="configured"\} [1-9]/m);
    expect(body).toMatch(/^applyset_objects_total\{action="unchanged"\} [1-9]/m);
  });
});
