import * as k8s from '@kubernetes/client-node';
import {
  adminKubeConfig,
  createNamespace,
  kubeconfigForServiceAccount,
  uniqueName,
} from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  kubectl,
  startController,
  waitForReady,
  type ApplySetView,
  type Cluster,
} from './e2e-kit.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { clusterAdminBindingYaml } from './e2e-manifests.js';
import { GitServerPool } from './git-server-pool.js';
import { coreRule, startLockedDownController, type LockedDownController } from './locked-down-controller.js';

// Issue #23, finding 1: a fresh install, with the chart's DEFAULT values (no --set at all), run as the
// chart's ServiceAccount with the RBAC and the arguments `helm template` renders. A tenant allowed only
// to create ApplySets in team-a tries, through Git, what the issue measured on the old defaults: bind
// cluster-admin, write into kube-system, adopt an object it could not write, have a Git token sent to
// its own server, act as another account. Each ApplySet ends not Ready with a clear reason, and nothing
// is written.

const PASSWORD = 'team-a-token-not-for-the-tenant';

describe("a fresh install with the chart's default values", () => {
  const c = cluster();
  const admin = adminKubeConfig();
  const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const teamA = uniqueName('team-a');
  const servers = new GitServerPool();
  const escalation = uniqueName('default-escalation');
  const planted = uniqueName('planted');
  const unowned = uniqueName('unowned');
  let controller: LockedDownController;
  let tenant: Cluster;

  /** Waits for the ApplySet to stall, and checks that nothing of the tenant's Git reached the cluster. */
  const stalled = async (name: string, reason: string): Promise<ApplySetView> => {
    const view = await waitForReady(
      tenant,
      teamA,
      name,
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(view, 'Stalled')?.reason).toBe(reason);
    return view;
  };
  const nothingWritten = async () => {
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });
    expect(await configMapData(c, 'kube-system', planted)).toBeUndefined();
    expect(await configMapData(c, 'kube-system', unowned)).toEqual({ k: 'original' });
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(admin, teamA);
    // The tenant: may create and read ApplySets in team-a, and nothing else.
    const kubeconfig = await kubeconfigForServiceAccount(teamA, 'alice');
    await rbac.createNamespacedRole({
      namespace: teamA,
      body: {
        metadata: { name: 'alice' },
        rules: [
          {
            apiGroups: ['applyset.dev'],
            resources: ['applysets'],
            verbs: ['create', 'get', 'list', 'watch'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: teamA,
      body: {
        metadata: { name: 'alice' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'alice' },
        subjects: [{ kind: 'ServiceAccount', name: 'alice', namespace: teamA }],
      },
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    tenant = {
      kc,
      core: kc.makeApiClient(k8s.CoreV1Api),
      apps: kc.makeApiClient(k8s.AppsV1Api),
      custom: kc.makeApiClient(k8s.CustomObjectsApi),
    };
    // An object in kube-system that belongs to no set: the tenant's Git will try to adopt it.
    await core.createNamespacedConfigMap({
      namespace: 'kube-system',
      body: { metadata: { name: unowned }, data: { k: 'original' } },
    });
    controller = await startLockedDownController({ namespace: teamA, chartDefaults: true });
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await controller?.cleanup();
    await rbac.deleteClusterRoleBinding({ name: escalation }).catch(() => undefined);
    for (const name of [planted, unowned]) {
      await core.deleteNamespacedConfigMap({ namespace: 'kube-system', name }).catch(() => undefined);
    }
  });

  it('renders no rights on children for the controller, and impersonation of applyset-deployer only', () => {
    const clusterRoles = controller.rendered.filter((doc) => doc.kind === 'ClusterRole');
    expect(clusterRoles.map((doc) => doc.metadata.name)).toEqual([
      expect.stringMatching(/-applyset-controller$/),
    ]);
    const rules = (clusterRoles[0] as unknown as k8s.V1ClusterRole).rules ?? [];
    expect(rules.filter((rule) => rule.verbs.includes('impersonate'))).toEqual([
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        verbs: ['impersonate'],
        resourceNames: ['applyset-deployer'],
      },
    ]);
    expect(controller.args).not.toContain('--apply-as-controller');
  });

  it('stalls an ApplySet of a namespace without applyset-deployer, saying what to create, and applies nothing', async () => {
    const git = await servers.start({
      files: {
        'escalate.yaml': clusterAdminBindingYaml(escalation, teamA, 'alice'),
        'elsewhere.yaml': configMapYaml(planted, { k: 'v' }, 'kube-system'),
        'own.yaml': configMapYaml('own', { k: 'v' }),
      },
    });
    await createApplySet(tenant, teamA, 'no-account', { url: git.url });
    const view = await stalled('no-account', 'ServiceAccountNotFound');
    expect(condition(view, 'Ready')?.message).toBe(
      `ServiceAccount ${teamA}/applyset-deployer does not exist; nothing was applied. Create it and grant it what the set holds: ` +
        `kubectl -n ${teamA} create serviceaccount applyset-deployer && kubectl -n ${teamA} create rolebinding applyset-deployer ` +
        `--clusterrole=edit --serviceaccount=${teamA}:applyset-deployer (see docs/multi-tenancy.md)`,
    );
    await nothingWritten();
    expect(await configMapData(c, teamA, 'own')).toBeUndefined();
  });

  describe('once team-a has applyset-deployer, created as that message says', () => {
    beforeAll(async () => {
      const message = `kubectl -n ${teamA} create serviceaccount applyset-deployer && kubectl -n ${teamA} create rolebinding applyset-deployer --clusterrole=edit --serviceaccount=${teamA}:applyset-deployer`;
      for (const command of message.split(' && ')) await kubectl(command.split(' ').slice(1));
      // team-a's ConfigMaps are also granted explicitly (`edit`, now filled by the control plane's
      // ClusterRole aggregation, grants them too: test/docs/readme-tenancy-commands.itest.ts).
      await rbac.createNamespacedRole({
        namespace: teamA,
        body: { metadata: { name: 'configmaps' }, rules: [coreRule('configmaps')] },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: teamA,
        body: {
          metadata: { name: 'configmaps' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmaps' },
          subjects: [{ kind: 'ServiceAccount', name: 'applyset-deployer', namespace: teamA }],
        },
      });
    });

    const refusedWith403 = async (name: string, object: string) => {
      const view = await waitForReady(tenant, teamA, name, 'False', (v) =>
        (v.status?.errors?.items ?? []).some((e) => e.object === object),
      );
      expect(condition(view, 'Ready')?.reason).toBe('ApplyFailed');
      expect(view.status?.errors?.items).toEqual([
        { object, message: expect.stringContaining('403 Forbidden') },
      ]);
      expect(view.status?.errors?.items[0]?.message).toContain(
        `User "system:serviceaccount:${teamA}:applyset-deployer"`,
      );
      await nothingWritten();
    };

    it('cannot create a ClusterRoleBinding to cluster-admin', async () => {
      const git = await servers.start({
        files: {
          'escalate.yaml': clusterAdminBindingYaml(escalation, teamA, 'alice'),
          'own.yaml': configMapYaml('beside-the-escalation', { k: 'v' }),
        },
      });
      await createApplySet(tenant, teamA, 'escalate', { url: git.url });
      await refusedWith403('escalate', `:rbac.authorization.k8s.io:ClusterRoleBinding:${escalation}`);
      // What the account may write, it wrote: the refusal is the account's RBAC, not a broken set-up.
      expect(await configMapData(c, teamA, 'beside-the-escalation')).toEqual({ k: 'v' });
    });

    it('cannot write a ConfigMap into kube-system', async () => {
      const git = await servers.start({
        files: { 'elsewhere.yaml': configMapYaml(planted, { k: 'v' }, 'kube-system') },
      });
      await createApplySet(tenant, teamA, 'elsewhere', { url: git.url });
      await refusedWith403('elsewhere', `kube-system::ConfigMap:${planted}`);
    });

    it('cannot adopt an unowned object of kube-system with spec.adopt', async () => {
      const git = await servers.start({
        files: { 'adopt.yaml': configMapYaml(unowned, { k: 'rewritten' }, 'kube-system') },
      });
      await createApplySetWithSpec(tenant, teamA, 'adopt', { url: git.url }, { adopt: true });
      await refusedWith403('adopt', `kube-system::ConfigMap:${unowned}`);
      const live = await core.readNamespacedConfigMap({ namespace: 'kube-system', name: unowned });
      expect(Object.keys(live.metadata?.labels ?? {}).filter((key) => key.includes('applyset'))).toEqual([]);
    });

    it("does not send a team-a Secret's Git token to the tenant's server when the Secret names no hosts", async () => {
      // The tenant's own server, which would log whatever credentials reach it.
      const git = await servers.start({
        files: { 'own.yaml': configMapYaml('from-token', { k: 'v' }) },
        auth: { username: 'deploy', password: PASSWORD },
      });
      await core.createNamespacedSecret({
        namespace: teamA,
        body: { metadata: { name: 'git-token' }, stringData: { username: 'deploy', password: PASSWORD } },
      });
      // The account may read the Secret (it is read as the account): what stops the token is the host.
      await rbac.createNamespacedRole({
        namespace: teamA,
        body: {
          metadata: { name: 'git-token' },
          rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['git-token'], verbs: ['get'] }],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: teamA,
        body: {
          metadata: { name: 'git-token' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'git-token' },
          subjects: [{ kind: 'ServiceAccount', name: 'applyset-deployer', namespace: teamA }],
        },
      });
      await createApplySet(tenant, teamA, 'token', { url: git.url, secretName: 'git-token' });
      const view = await stalled('token', 'CredentialsNotForHost');
      expect(condition(view, 'Ready')?.message).toContain(
        `Secret ${teamA}/git-token names no hosts (annotation applyset.dev/source-hosts), which this controller requires`,
      );
      expect(git.requests.filter((request) => request.authorization)).toEqual([]);
      expect(JSON.stringify(view)).not.toContain(PASSWORD);
      expect(await configMapData(c, teamA, 'from-token')).toBeUndefined();
    });

    it('cannot act as another account of team-a: the API server refuses the impersonation and the set stalls', async () => {
      // `ops` exists and may do anything in team-a, but the chart lets the controller impersonate only
      // applyset-deployer (and tenancy.serviceAccountNames).
      await core.createNamespacedServiceAccount({ namespace: teamA, body: { metadata: { name: 'ops' } } });
      await rbac.createNamespacedRoleBinding({
        namespace: teamA,
        body: {
          metadata: { name: 'ops' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
          subjects: [{ kind: 'ServiceAccount', name: 'ops', namespace: teamA }],
        },
      });
      const git = await servers.start({ files: { 'own.yaml': configMapYaml('as-ops', { k: 'v' }) } });
      await createApplySet(tenant, teamA, 'as-ops', { url: git.url, serviceAccountName: 'ops' });
      const view = await stalled('as-ops', 'ImpersonationForbidden');
      expect(condition(view, 'Ready')?.message).toBe(
        `the controller may not impersonate ServiceAccount ${teamA}/ops; nothing was applied. ` +
          'Name an account the controller may use (chart value tenancy.serviceAccountNames, see docs/multi-tenancy.md)',
      );
      expect(await configMapData(c, teamA, 'as-ops')).toBeUndefined();
    });
  });
});

describe('applyset controller run by hand, with no tenancy flag', () => {
  const c = cluster();
  const namespace = uniqueName('by-hand');
  const escalation = uniqueName('by-hand-escalation');
  const servers = new GitServerPool();
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    // As cluster admin, the way an operator would try it first: the defaults still never apply an
    // ApplySet as the controller.
    await startController({ namespace, provisionDeployer: false });
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await rbac.deleteClusterRoleBinding({ name: escalation }).catch(() => undefined);
  });

  it('applies nothing as the controller: without applyset-deployer the ApplySet stalls saying what to create', async () => {
    const git = await servers.start({
      files: { 'escalate.yaml': clusterAdminBindingYaml(escalation, namespace, 'default') },
    });
    await createApplySet(c, namespace, 'escalate', { url: git.url });
    const view = await waitForReady(
      c,
      namespace,
      'escalate',
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(view, 'Stalled')?.reason).toBe('ServiceAccountNotFound');
    expect(condition(view, 'Ready')?.message).toContain(
      `kubectl -n ${namespace} create serviceaccount applyset-deployer && kubectl -n ${namespace} create rolebinding applyset-deployer`,
    );
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });
  });
});
