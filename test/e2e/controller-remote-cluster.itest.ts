import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  kubectl,
  patchApplySet,
  startController,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type Cluster,
  type ControllerProcess,
} from './e2e-kit.js';
import { kubeRequestsByVerb, type Verb } from './controller-metrics.js';
import { createTenantAccount } from './locked-down-controller.js';
import { helmBinary } from '../harness/helm-binary.js';

// Issue #26, remote clusters: an ApplySet on cluster A (the shared control plane) with
// spec.kubeConfig.secretRef is applied to cluster B (a second control plane this suite starts): its
// objects appear on B and not on A, prune happens on B, the ApplySet's account is impersonated on B,
// a kubeconfig with an exec plugin is refused without running it, and B going down stalls only the
// ApplySets that name it. spec.wait waits for the health of B's objects, an object annotated for
// server-side apply is applied server-side on B, and B's requests are counted under B's own `cluster`
// label in applyset_kube_requests_total.

/** A Cluster (the kit's clients) over the kubeconfig file of another control plane. */
function clusterOf(kubeconfigPath: string): Cluster {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
  };
}

/** `account` of `namespace` on cluster `on`, may do `rules` in that namespace there (B has no admin role). */
async function grantOn(on: Cluster, namespace: string, account: string, rules: k8s.V1PolicyRule[]) {
  const rbac = on.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const name = `${account}-remote`;
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
}

const EVERYTHING: k8s.V1PolicyRule[] = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];

const deploymentYaml = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  replicas: 2
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: ${name}, image: nginx:1.27 }] }
`;

/** Writes a rolled-out status on `on`'s Deployment, as the deployment controller would (none runs). */
async function markRolledOut(on: Cluster, namespace: string, name: string, replicas: number) {
  const live = await on.apps.readNamespacedDeployment({ namespace, name });
  const status = {
    observedGeneration: live.metadata?.generation,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
  };
  await on.apps.patchNamespacedDeploymentStatus(
    { namespace, name, body: { status } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

/** The differences of request counts by verb. */
const since = (after: Record<Verb, number>, before: Record<Verb, number>) =>
  Object.fromEntries(Object.entries(after).map(([verb, n]) => [verb, n - before[verb as Verb]]));

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** A ConfigMap that asks to be applied server-side. */
const SETTINGS = (data: Record<string, string>) =>
  configMapYaml('settings', data).replace(
    'metadata:\n',
    'metadata:\n  annotations: { applyset.dev/apply-strategy: server-side }\n',
  );

describe('an ApplySet applied to a remote cluster (spec.kubeConfig.secretRef)', () => {
  const a = cluster();
  const namespace = uniqueName('e2e-remote');
  let b: ControlPlane | undefined;
  let onB: Cluster;
  let git: GitTestServer;
  let controller: ControllerProcess;
  const marker = join(process.env['TMPDIR'] ?? '/tmp', `${namespace}-exec-ran`);

  const remoteSpec = (secret: string) => ({ kubeConfig: { secretRef: { name: secret } } });
  const remoteSpecPatch = (secret: string) => ({ spec: remoteSpec(secret) });

  /** Deletes an ApplySet (pruning its objects on B) and waits until it is gone. */
  const deleteApplySet = async (name: string) => {
    await a.custom.deleteNamespacedCustomObject({
      group: 'applyset.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'applysets',
      name,
    });
    await waitFor(`ApplySet ${name} to be gone`, async () =>
      (await getApplySet(a, namespace, name)) === undefined ? true : undefined,
    );
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(a.kc, namespace);
    b = await startControlPlane({ ownerPid: process.pid });
    onB = clusterOf(b.kubeconfigPath);
    await createNamespace(onB.kc, namespace);
    // B's RBAC for the default account: every right in the namespace of the same name, nothing else.
    await grantOn(onB, namespace, 'applyset-deployer', EVERYTHING);
    git = await startGitServer({
      files: {
        'app/web.yaml': configMapYaml('web', { tier: 'front' }),
        'app/extra.yaml': configMapYaml('extra', { tier: 'spare' }),
        'limited/allowed.yaml': configMapYaml('allowed', { k: 'v' }),
        'limited/secret.yaml':
          'apiVersion: v1\nkind: Secret\nmetadata:\n  name: not-allowed\nstringData:\n  k: v\n',
        'local/here.yaml': configMapYaml('here', { rev: '1' }),
        'counted/one.yaml': configMapYaml('one', { k: '1' }),
        'counted/two.yaml': configMapYaml('two', { k: '2' }),
        'counted/three.yaml': configMapYaml('three', { k: '3' }),
        'health/web.yaml': deploymentYaml('web'),
        'ssa/settings.yaml': SETTINGS({ a: '1', b: '2' }),
        'move/moving.yaml': configMapYaml('moving', { k: 'v' }),
        // Branches on the ApplySet CRD, which A serves and B does not.
        'chart/Chart.yaml': 'apiVersion: v2\nname: probe\nversion: 0.1.0\n',
        'chart/templates/probe.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  applySets: {{ ternary "served" "absent" (.Capabilities.APIVersions.Has "applyset.dev/v1alpha1/ApplySet") | quote }}\n  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n',
      },
    });
    // B's own admin kubeconfig: inline CA and token, as a kubeconfig Secret should be.
    await a.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'cluster-b' },
        stringData: { value: await readFile(b.kubeconfigPath, 'utf8') },
      },
    });
    // One worker: a remote ApplySet holding it would starve the local one, which must stay on time.
    controller = await startController({
      namespace,
      args: ['--allowed-remote-cluster-hosts', '127.0.0.1', '--concurrency', '1'],
      env: { APPLYSET_HELM_BINARY: await helmBinary() },
    });
  }, 180_000);

  afterAll(async () => {
    await stopControllersAndGit(git);
    await b?.stop();
  });

  it('applies to B and not A, prunes on B what a commit removes, and corrects drift on B', async () => {
    await createApplySetWithSpec(
      a,
      namespace,
      'remote',
      { url: git.url, path: 'app' },
      remoteSpec('cluster-b'),
    );
    // The CRD keeps the field (an older CRD would drop it, and the set would go to A).
    const stored = (await getApplySet(a, namespace, 'remote')) as { spec?: { kubeConfig?: unknown } };
    expect(stored.spec?.kubeConfig).toEqual({ secretRef: { name: 'cluster-b' } });
    await waitForAppliedCommit(a, namespace, 'remote', await git.revParse('main'), 60_000);
    expect(await configMapData(onB, namespace, 'web')).toEqual({ tier: 'front' });
    expect(await configMapData(onB, namespace, 'extra')).toEqual({ tier: 'spare' });
    expect(await configMapData(a, namespace, 'web')).toBeUndefined();
    // The inventory is the ApplySet's, on A; the objects on B carry its uid as their owner.
    const parent = await a.custom.getNamespacedCustomObject({
      group: 'applyset.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'applysets',
      name: 'remote',
    });
    const web = await onB.core.readNamespacedConfigMap({ namespace, name: 'web' });
    expect(web.metadata?.annotations?.['kubectl.kubernetes.io/apply-owner']).toBe(
      (parent as { metadata: { uid: string } }).metadata.uid,
    );

    const removed = await git.deleteFiles(['app/extra.yaml']);
    await waitForAppliedCommit(a, namespace, 'remote', removed, 30_000);
    expect(await configMapData(onB, namespace, 'extra')).toBeUndefined();
    expect(await configMapData(onB, namespace, 'web')).toEqual({ tier: 'front' });

    // Drift on B is corrected on B, by the next run on the interval.
    await onB.core.patchNamespacedConfigMap(
      { namespace, name: 'web', body: { data: { tier: 'tampered' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor('the drift on B to be corrected', async () =>
      (await configMapData(onB, namespace, 'web'))?.['tier'] === 'front' ? true : undefined,
    );
  });

  it("counts the requests of a remote ApplySet under B's host:port, not with the controller's own", async () => {
    const bLabel = `127.0.0.1:${new URL((b as ControlPlane).server).port}`;
    const [localBefore, bBefore] = [
      await kubeRequestsByVerb(controller),
      await kubeRequestsByVerb(controller, bLabel),
    ];
    // B's series exist already: the first test's ApplySet sent its requests there.
    expect(bBefore.POST).toBeGreaterThan(0);
    // An hour's interval: the first reconcile alone, while the one of the first test is at rest.
    await createApplySetWithSpec(
      a,
      namespace,
      'counted',
      { url: git.url, path: 'counted', interval: '1h' },
      remoteSpec('cluster-b'),
    );
    await waitForAppliedCommit(a, namespace, 'counted', await git.revParse('main'), 60_000);
    await waitFor('the ReconciliationSucceeded event of the counted ApplySet', async () => {
      const events = await a.core.listNamespacedEvent({
        namespace,
        fieldSelector: 'involvedObject.name=counted',
      });
      return events.items.some((event) => event.reason === 'ReconciliationSucceeded') ? true : undefined;
    });
    expect(await configMapData(onB, namespace, 'three')).toEqual({ k: '3' });
    // The three ConfigMaps were created on B and counted there; B got no other write (the inventory is
    // on A). On A: the inventory and status patches, and events, but not the three creates.
    const onBCounted = since(await kubeRequestsByVerb(controller, bLabel), bBefore);
    expect(onBCounted).toMatchObject({ POST: 3, PATCH: 0, PUT: 0, DELETE: 0 });
    expect(onBCounted['GET']).toBeGreaterThan(0);
    const onACounted = since(await kubeRequestsByVerb(controller), localBefore);
    expect(onACounted['POST']).toBeLessThan(3);
    expect(onACounted['PATCH']).toBeGreaterThan(0);
    await deleteApplySet('counted');
    expect(await configMapData(onB, namespace, 'three')).toBeUndefined();
  });

  it("impersonates the ApplySet's account on B, where B refuses what that account may not do", async () => {
    // The account exists on A (and may read the kubeconfig Secret there); on B it may write ConfigMaps only.
    await createTenantAccount(a, namespace, 'limited', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['cluster-b'], verbs: ['get'] },
    ]);
    await grantOn(onB, namespace, 'limited', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
    await createApplySetWithSpec(
      a,
      namespace,
      'limited',
      { url: git.url, path: 'limited', serviceAccountName: 'limited' },
      remoteSpec('cluster-b'),
    );
    const refused = await waitForReady(a, namespace, 'limited', 'False', (view) =>
      (condition(view, 'Ready')?.message ?? '').includes('forbidden'),
    );
    expect(condition(refused, 'Ready')?.message).toContain(`system:serviceaccount:${namespace}:limited`);
    // What the account may write reached B; what it may not is not there.
    expect(await configMapData(onB, namespace, 'allowed')).toEqual({ k: 'v' });
    expect(await configMapData(a, namespace, 'allowed')).toBeUndefined();
    await expect(onB.core.readNamespacedSecret({ namespace, name: 'not-allowed' })).rejects.toMatchObject({
      code: 404,
    });
  });

  it("waits with spec.wait for the health of B's objects, not of A's objects of the same names", async () => {
    // On A, the same Deployment rolled out and the checked ConfigMap: a wait that read A would pass.
    await a.apps.createNamespacedDeployment({
      namespace,
      body: k8s.loadYaml<k8s.V1Deployment>(deploymentYaml('web')),
    });
    await markRolledOut(a, namespace, 'web', 2);
    await a.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'made-elsewhere' } } });
    await createApplySetWithSpec(
      a,
      namespace,
      'health',
      { url: git.url, path: 'health' },
      {
        ...remoteSpec('cluster-b'),
        wait: true,
        // Long enough that fetch and apply fit in it on a loaded machine: the wait is what must time out.
        timeout: '20s',
        healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'made-elsewhere', namespace }],
      },
    );
    const progressing = await waitForReady(
      a,
      namespace,
      'health',
      'Unknown',
      (view) => condition(view, 'Ready')?.reason === 'Progressing',
      60_000,
    );
    expect(condition(progressing, 'Ready')?.message).toBe(
      'waiting for deployment.apps/web: the Deployment has no status yet; ' +
        'configmap/made-elsewhere: the object does not exist',
    );
    const failed = await waitForReady(
      a,
      namespace,
      'health',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'HealthCheckFailed',
      60_000,
    );
    expect(failed.status?.errors?.items).toEqual(
      expect.arrayContaining([
        {
          object: `${namespace}:apps:Deployment:web`,
          message: 'InProgress: the Deployment has no status yet',
        },
        { object: `${namespace}::ConfigMap:made-elsewhere`, message: 'NotFound: the object does not exist' },
      ]),
    );

    // On B the rollout completes and the checked object appears: the ApplySet becomes Ready.
    await markRolledOut(onB, namespace, 'web', 2);
    await onB.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'made-elsewhere' } } });
    const ready = await waitForReady(a, namespace, 'health', 'True', undefined, 60_000);
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    // Its one worker is shared with the tests below: the ApplySet goes, and its Deployment on B with it.
    await deleteApplySet('health');
    await waitFor('the Deployment on B to be pruned', async () =>
      (await onB.apps.listNamespacedDeployment({ namespace })).items.length === 0 ? true : undefined,
    );
    expect((await a.apps.readNamespacedDeployment({ namespace, name: 'web' })).metadata?.name).toBe('web');
  }, 200_000);

  it('applies server-side on B what asks for it: field manager applyset there, and a field left Git is removed', async () => {
    await createApplySetWithSpec(a, namespace, 'ssa', { url: git.url, path: 'ssa' }, remoteSpec('cluster-b'));
    await waitForAppliedCommit(a, namespace, 'ssa', await git.revParse('main'), 60_000);
    const applied = await onB.core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(applied.data).toEqual({ a: '1', b: '2' });
    expect(applied.metadata?.annotations?.[LAST_APPLIED]).toBeUndefined();
    expect(
      (applied.metadata?.managedFields ?? []).map(({ manager, operation }) => ({ manager, operation })),
    ).toContainEqual({ manager: 'applyset', operation: 'Apply' });
    expect(await configMapData(a, namespace, 'settings')).toBeUndefined();

    // Someone else sets a field on B; Git drops another. Server-side apply on B removes only what the
    // controller's field manager owned there.
    await kubectl(
      ['-n', namespace, 'patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"c":"theirs"}}'],
      (b as ControlPlane).kubeconfigPath,
    );
    const dropped = await git.writeFiles({ 'ssa/settings.yaml': SETTINGS({ a: '1' }) });
    await waitForAppliedCommit(a, namespace, 'ssa', dropped, 60_000);
    expect(await configMapData(onB, namespace, 'settings')).toEqual({ a: '1', c: 'theirs' });
    await deleteApplySet('ssa');
    expect(await configMapData(onB, namespace, 'settings')).toBeUndefined();
  });

  it("renders a chart with B's capabilities, not A's: the APIs B serves and its version", async () => {
    await createApplySetWithSpec(
      a,
      namespace,
      'remote-chart',
      { url: git.url, path: 'chart' },
      { ...remoteSpec('cluster-b'), helm: {} },
    );
    await waitForAppliedCommit(a, namespace, 'remote-chart', await git.revParse('main'), 60_000);
    const version = await onB.kc.makeApiClient(k8s.VersionApi).getCode();
    // A serves ApplySets; B, which has no such CRD, does not: the render asked B.
    expect(await configMapData(onB, namespace, 'probe')).toEqual({
      applySets: 'absent',
      kubeVersion: version.gitVersion,
    });
    await deleteApplySet('remote-chart');
  });

  it('refuses a kubeconfig with an exec plugin, and never runs it', async () => {
    const server = (b as ControlPlane).server;
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'b', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [
        {
          name: 'plugin',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: '/bin/sh',
              args: ['-c', `touch ${marker}`],
            },
          },
        },
      ],
      contexts: [{ name: 'b', context: { cluster: 'b', user: 'plugin' } }],
      'current-context': 'b',
    };
    await a.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'exec-kubeconfig' }, stringData: { value: JSON.stringify(kubeconfig) } },
    });
    await createApplySetWithSpec(
      a,
      namespace,
      'exec',
      { url: git.url, path: 'app' },
      remoteSpec('exec-kubeconfig'),
    );
    const stalled = await waitForReady(a, namespace, 'exec', 'False');
    expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'KubeConfigRefused' });
    expect(condition(stalled, 'Ready')?.message).toBe(
      `the kubeconfig of Secret ${namespace}/exec-kubeconfig, key value is refused: user "plugin" has an exec plugin (/bin/sh): plugins are refused unless the controller runs with --allow-remote-kubeconfig-exec`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it.each([
    [
      'proxy-url',
      { 'proxy-url': 'http://127.0.0.1:3128' },
      {},
      'cluster "b" sets proxy-url: a remote cluster is reached without a proxy',
    ],
    [
      'as',
      {},
      { as: 'system:admin' },
      `user "admin" sets as: the controller impersonates the ApplySet's account itself, so a kubeconfig may not impersonate`,
    ],
  ])(
    'stalls a kubeconfig with %s as KubeConfigRefused naming the field, and applies nothing on B',
    async (field, clusterFields, userFields, problem) => {
      const secret = `${field}-kubeconfig`;
      const name = `refused-${field}`;
      const kubeconfig = {
        clusters: [
          {
            name: 'b',
            cluster: {
              server: (b as ControlPlane).server,
              'insecure-skip-tls-verify': true,
              ...clusterFields,
            },
          },
        ],
        users: [{ name: 'admin', user: { token: 'unused', ...userFields } }],
        contexts: [{ name: 'b', context: { cluster: 'b', user: 'admin' } }],
        'current-context': 'b',
      };
      await a.core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: secret }, stringData: { value: JSON.stringify(kubeconfig) } },
      });
      await createApplySetWithSpec(a, namespace, name, { url: git.url, path: 'limited' }, remoteSpec(secret));
      const stalled = await waitForReady(a, namespace, name, 'False');
      expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'KubeConfigRefused' });
      expect(condition(stalled, 'Ready')?.message).toBe(
        `the kubeconfig of Secret ${namespace}/${secret}, key value is refused: ${problem}`,
      );
      await deleteApplySet(name);
    },
  );

  /** The reasons of the events of ApplySet `name` on A. */
  const eventsOf = async (name: string) =>
    (await a.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items;

  it('moves an ApplySet between A and B with spec.kubeConfig: its objects leave the cluster it left', async () => {
    await createApplySet(a, namespace, 'mover', { url: git.url, path: 'move' });
    await waitForAppliedCommit(a, namespace, 'mover', await git.revParse('main'), 60_000);
    expect(await configMapData(a, namespace, 'moving')).toEqual({ k: 'v' });

    // None to B: pruned on A, then applied on B.
    await patchApplySet(namespace, 'mover', remoteSpecPatch('cluster-b'));
    await waitFor("the set's ConfigMap to leave A and be on B", async () =>
      (await configMapData(a, namespace, 'moving')) === undefined &&
      (await configMapData(onB, namespace, 'moving'))?.['k'] === 'v'
        ? true
        : undefined,
    );

    // B back to none: pruned on B (its own object there), applied on A again.
    await patchApplySet(namespace, 'mover', { spec: { kubeConfig: null } });
    await waitFor("the set's ConfigMap to leave B and be back on A", async () =>
      (await configMapData(onB, namespace, 'moving')) === undefined &&
      (await configMapData(a, namespace, 'moving'))?.['k'] === 'v'
        ? true
        : undefined,
    );
    const events = await eventsOf('mover');
    expect(events.map((event) => event.message)).toContainEqual(
      expect.stringContaining(
        "spec.kubeConfig moved the set from the cluster of Secret cluster-b to the controller's own cluster: 1 object(s) pruned on the previous cluster",
      ),
    );
    // Left on B for the test below, which finds B down.
    await patchApplySet(namespace, 'mover', remoteSpecPatch('cluster-b'));
    await waitFor('the set to be on B again', async () =>
      (await configMapData(onB, namespace, 'moving'))?.['k'] === 'v' &&
      (await configMapData(a, namespace, 'moving')) === undefined
        ? true
        : undefined,
    );
  }, 200_000);

  it('stalls only the ApplySets of B when B is down, naming B, while one on A applies a new commit on time', async () => {
    const down = b as ControlPlane;
    await createApplySet(a, namespace, 'local', { url: git.url, path: 'local' });
    await waitForAppliedCommit(a, namespace, 'local', await git.revParse('main'), 30_000);

    await down.stop();
    b = undefined;
    const unreachable = await waitForReady(
      a,
      namespace,
      'remote',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'RemoteClusterUnreachable',
    );
    expect(condition(unreachable, 'Ready')?.message).toContain(
      `remote cluster ${down.server} (the kubeconfig of Secret ${namespace}/cluster-b, key value) is unreachable`,
    );

    // The local ApplySet's interval is 5 s: a new commit is applied within two intervals and a margin,
    // though its one worker is shared with an ApplySet whose cluster is down.
    const committed = Date.now();
    const next = await git.writeFiles({ 'local/here.yaml': configMapYaml('here', { rev: '2' }) });
    await waitForAppliedCommit(a, namespace, 'local', next, 15_000);
    expect(await configMapData(a, namespace, 'here')).toEqual({ rev: '2' });
    expect(Date.now() - committed).toBeLessThan(15_000);
    expect(controller.child.exitCode).toBeNull();
  });

  it('holds a move off a cluster that is down: nothing applied to A, a condition and an event say why', async () => {
    // B stopped in the test above; 'mover' holds a ConfigMap there.
    await patchApplySet(namespace, 'mover', { spec: { kubeConfig: null } });
    const held = await waitForReady(
      a,
      namespace,
      'mover',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'PreviousClusterUnreachable',
      60_000,
    );
    expect(condition(held, 'Ready')?.message).toContain(
      "spec.kubeConfig moved the set from the cluster of Secret cluster-b to the controller's own cluster, and its objects there must be pruned first: remote cluster",
    );
    expect(condition(held, 'Ready')?.message).toContain('Nothing was applied');
    await waitFor('a Warning event about the held move', async () =>
      (await eventsOf('mover')).find(
        (event) => event.type === 'Warning' && (event.message ?? '').includes('must be pruned first'),
      ),
    );
    expect(await configMapData(a, namespace, 'moving')).toBeUndefined();
    // Deleting Secret cluster-b (the test below) lets it go, leaving its ConfigMap on B.
  });

  it('deletes an ApplySet whose remote cluster is gone: it waits while the kubeconfig could still reach it, then lets it go', async () => {
    await a.custom.deleteNamespacedCustomObject({
      group: 'applyset.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'applysets',
      name: 'remote',
    });
    // B is down: the finalizer keeps the ApplySet, saying why, rather than dropping what it holds there.
    const failed = await waitFor('a PruneFailed event naming the remote cluster', async () => {
      const events = await a.core.listNamespacedEvent({ namespace });
      return events.items.find(
        (event) =>
          event.involvedObject.name === 'remote' &&
          event.reason === 'PruneFailed' &&
          (event.message ?? '').includes('is unreachable'),
      );
    });
    expect(failed.message).toContain(`the kubeconfig of Secret ${namespace}/cluster-b, key value`);
    expect(await getApplySet(a, namespace, 'remote')).toBeDefined();
    // Without its kubeconfig nothing can reach B any more: the ApplySet goes, leaving B's objects.
    await a.core.deleteNamespacedSecret({ namespace, name: 'cluster-b' });
    await waitFor('the ApplySet to be gone', async () =>
      (await getApplySet(a, namespace, 'remote')) === undefined ? true : undefined,
    );
    const events = await a.core.listNamespacedEvent({ namespace });
    expect(
      events.items.some(
        (event) => event.reason === 'RemoteChildrenLeft' && event.involvedObject.name === 'remote',
      ),
    ).toBe(true);
  });
});
