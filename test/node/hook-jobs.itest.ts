import * as k8s from '@kubernetes/client-node';
import { createApplySetWithSpec } from '../e2e/create-applyset-with-spec.js';
import { startController, stopAllControllers, type ControllerProcess } from '../e2e/controller-process.js';
import {
  cluster,
  condition,
  configMapData,
  installCrd,
  waitFor,
  waitForReady,
  type Cluster,
} from '../e2e/e2e-kit.js';
import { controllerImage, type ControllerImage } from '../harness/controller-image.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { startNodeCluster, type NodeCluster } from '../harness/node-cluster.js';
import { viewerIn } from '../ui/ui-tenants.js';

// Issues #36 and #38, on a node that runs pods: the hooks' Jobs really run. A PreSync Job (Helm's
// pre-install) writes the ConfigMap that the set's Deployment reads its environment from, so the
// Deployment can start only if the hook ran first; a PostSync Job (Argo CD's) exits 1 once the
// Deployment is available, which marks the set HookFailed and runs its SyncFail hook. The controller's
// web view then shows the line the PostSync Job's Pod printed before it failed, read from the node.

/** A container of the controller's image running `node -e SCRIPT`: the one image the node holds. */
const nodeContainer = (image: string, script: string) =>
  JSON.stringify([
    {
      name: 'main',
      image,
      imagePullPolicy: 'Never',
      command: ['node', '-e', script],
      env: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' }],
    },
  ]);

/** Creates ConfigMap `migrated` in its own namespace through the API, with its ServiceAccount's token. */
const MIGRATE = `
const fs = require('fs');
const dir = '/var/run/secrets/kubernetes.io/serviceaccount/';
const ns = fs.readFileSync(dir + 'namespace', 'utf8');
fetch('https://' + process.env.KUBERNETES_SERVICE_HOST + ':' + process.env.KUBERNETES_SERVICE_PORT + '/api/v1/namespaces/' + ns + '/configmaps', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + fs.readFileSync(dir + 'token', 'utf8'), 'content-type': 'application/json' },
  body: JSON.stringify({ metadata: { name: 'migrated' }, data: { schema: 'v2' } }),
}).then((r) => { console.log('migrate: ' + r.status); process.exit(r.status === 201 || r.status === 409 ? 0 : 1); },
  (e) => { console.error(e); process.exit(1); });
`;

function repository(image: string) {
  return {
    'pre.yaml': `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: "-1"}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: ${nodeContainer(image, MIGRATE)}
`,
    'app.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: main
          image: ${image}
          imagePullPolicy: Never
          command: [node, -e, "setInterval(() => {}, 1e9)"]
          env: [{name: SCHEMA, valueFrom: {configMapKeyRef: {name: migrated, key: schema}}}]
`,
    'post.yaml': `apiVersion: batch/v1
kind: Job
metadata:
  name: smoke
  annotations: {argocd.argoproj.io/hook: PostSync}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: ${nodeContainer(image, "console.log('smoke test failed'); process.exit(1)")}
`,
    'fail.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: sync-failed
  annotations: {argocd.argoproj.io/hook: SyncFail}
data: {seen: "yes"}
`,
  };
}

describe('hook Jobs on a node', () => {
  let node: NodeCluster;
  let image: ControllerImage;
  let c: Cluster;
  let git: GitTestServer;
  let controller: ControllerProcess;
  const namespace = 'hooks';

  beforeAll(async () => {
    image = await controllerImage();
    node = await startNodeCluster({
      ownerPid: process.pid,
      images: [image.archivePath],
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.env.APPLYSET_TEST_KUBECONFIG = node.controlPlane.kubeconfigPath;
    c = cluster();
    await c.core.createNamespace({ body: { metadata: { name: namespace } } });
    // The hook's own rights: its Job's ServiceAccount may write ConfigMaps of the namespace.
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'default-edit' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
        subjects: [{ kind: 'ServiceAccount', name: 'default', namespace }],
      },
    });
    await waitFor(
      'the default ServiceAccount',
      () => c.core.readNamespacedServiceAccount({ namespace, name: 'default' }).catch(() => undefined),
      60_000,
    );
    await installCrd();
    git = await startGitServer({ files: repository(image.reference) });
    controller = await startController({
      namespace,
      kubeconfig: node.controlPlane.kubeconfigPath,
      args: ['--ui-address', '127.0.0.1:0'],
    });
  }, 900_000);

  afterAll(async () => {
    await stopAllControllers();
    await git?.close();
    await node?.stop();
  }, 120_000);

  it('runs PreSync before the Deployment, PostSync once it is available, SyncFail when that fails', async () => {
    await createApplySetWithSpec(c, namespace, 'app', { url: git.url, interval: '1h' }, { timeout: '4m' });
    const view = await waitForReady(
      c,
      namespace,
      'app',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'HookFailed',
      300_000,
    );
    // The PreSync Job ran first: the Deployment's pod could start only with its ConfigMap.
    expect(await configMapData(c, namespace, 'migrated')).toEqual({ schema: 'v2' });
    const apps = c.kc.makeApiClient(k8s.AppsV1Api);
    const deployment = await apps.readNamespacedDeployment({ namespace, name: 'app' });
    expect(deployment.status?.availableReplicas).toBe(1);
    // The PostSync Job ran for real and failed, after the Deployment became available.
    const batch = c.kc.makeApiClient(k8s.BatchV1Api);
    const smoke = await batch.readNamespacedJob({ namespace, name: 'smoke' });
    expect(smoke.status?.failed).toBe(1);
    const available = deployment.status?.conditions?.find((x) => x.type === 'Available');
    expect(new Date(smoke.metadata?.creationTimestamp ?? 0).getTime()).toBeGreaterThanOrEqual(
      new Date(available?.lastTransitionTime ?? Date.now()).getTime(),
    );
    expect(condition(view, 'Ready')?.message).toContain(
      `PostSync hook job.batch/smoke -n ${namespace} failed: Failed: Job has failed: BackoffLimitExceeded`,
    );
    // The SyncFail hook ran.
    expect(await configMapData(c, namespace, 'sync-failed')).toEqual({ seen: 'yes' });
  }, 420_000);

  it("shows the failed PostSync Job's last log lines on the set's page, read from the node", async () => {
    const started = controller.logs.find((line) => line['msg'] === 'controller started');
    const page = `http://127.0.0.1:${String(started?.['uiPort'])}/applysets/${namespace}/app`;
    const token = await viewerIn(namespace);
    let section = '';
    // A HookFailed run is retried: each retry replaces the Job, and while it runs the page shows the
    // stage rather than the failure. Every distinct section seen is kept, to say what it showed.
    const seen = new Set<string>();
    await waitFor(
      'the log line of the smoke Job on the page',
      async () => {
        const answer = await fetch(page, { headers: { authorization: `Bearer ${token}` } });
        const body = await answer.text();
        section = body.slice(body.indexOf('id="h-stage"'), body.indexOf('id="h-next"'));
        seen.add(section.replace(/\s+/g, ' '));
        return section.includes('smoke test failed') ? true : undefined;
      },
      150_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; the sections seen:\n${[...seen].join('\n---\n')}`);
    });
    expect(section).toContain(`Log of job.batch/smoke -n ${namespace}`);
    expect(section).toMatch(/<pre class="log"><code>smoke test failed<\/code><\/pre>/);
  }, 200_000);
});
