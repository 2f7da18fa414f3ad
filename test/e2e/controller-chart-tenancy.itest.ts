import * as k8s from '@kubernetes/client-node';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import type { GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  kubectl,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { clusterAdminBindingYaml } from './e2e-manifests.js';
import { GitServerPool } from './git-server-pool.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// The chart's locked-down tenancy mode, for real: the controller runs as the chart's ServiceAccount with
// exactly the RBAC the chart renders for tenancy.defaultServiceAccount=deployer and rbac.childRules=[]
// (no rights on children of its own), with the flags the chart's Deployment passes. A tenant has only a
// namespaced Role. Whatever an ApplySet does, it does as the tenant's account, and no more.

describe("the controller with the chart's locked-down tenancy RBAC", () => {
  const c = cluster();
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const authz = c.kc.makeApiClient(k8s.AuthorizationV1Api);
  const teamA = uniqueName('team-a');
  const other = uniqueName('team-other');
  const servers = new GitServerPool();
  let controller: LockedDownController;

  /** What the authorizer says `user` (a ServiceAccount, with its groups) may do, as a SubjectAccessReview. */
  const mayServiceAccount = async (
    user: string,
    attributes: k8s.V1ResourceAttributes,
  ): Promise<boolean | undefined> => {
    const saNamespace = user.split(':')[2] ?? '';
    const review = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${saNamespace}`, 'system:authenticated'],
          resourceAttributes: attributes,
        },
      },
    });
    return review.status?.allowed;
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, teamA);
    await createNamespace(c.kc, other);
    // The tenant: a deployer account with a Role in team-a, nothing cluster-scoped.
    await createTenantAccount(c, teamA, DEFAULT_ACCOUNT, [coreRule('configmaps')]);
    controller = await startLockedDownController({ namespace: teamA });
    // childRules=[] renders no <fullname>-children role: one ClusterRole, the controller's own.
    expect(
      controller.rendered.filter((doc) => doc.kind === 'ClusterRole').map((doc) => doc.metadata.name),
    ).toEqual([expect.stringMatching(/-applyset-controller$/)]);
    const { args } = controller;
    // Secrets naming their hosts and no cross-namespace reference are the controller's defaults.
    expect(args).toEqual(expect.arrayContaining(['--default-service-account', DEFAULT_ACCOUNT]));
    expect(args).not.toContain('--apply-as-controller');
    expect(args).not.toContain('--allow-cross-namespace-refs');
    expect(args[args.indexOf('--default-service-account') + 1]).toBe(DEFAULT_ACCOUNT);
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await controller.cleanup();
  });

  const tenantUser = () => `system:serviceaccount:${teamA}:${DEFAULT_ACCOUNT}`;
  const escalation = uniqueName('tenant-escalation');
  let git: GitTestServer;

  it("the premise, by the authorizer: the controller's account has no rights on children, the tenant only team-a's ConfigMaps", async () => {
    for (const verb of ['create', 'update', 'patch', 'delete']) {
      expect(
        await mayServiceAccount(controller.user, { namespace: teamA, verb, resource: 'configmaps' }),
      ).toBe(false);
    }
    expect(
      await mayServiceAccount(controller.user, {
        verb: 'create',
        group: 'rbac.authorization.k8s.io',
        resource: 'clusterrolebindings',
      }),
    ).toBe(false);
    // kubectl says the same.
    await expect(
      kubectl(['auth', 'can-i', 'create', 'configmaps', '-n', teamA, '--as', controller.user]),
    ).rejects.toMatchObject({ stdout: 'no\n' });
    expect(
      await mayServiceAccount(tenantUser(), { namespace: teamA, verb: 'create', resource: 'configmaps' }),
    ).toBe(true);
    expect(
      await mayServiceAccount(tenantUser(), { namespace: other, verb: 'create', resource: 'configmaps' }),
    ).toBe(false);
    expect(
      await mayServiceAccount(tenantUser(), {
        verb: 'create',
        group: 'rbac.authorization.k8s.io',
        resource: 'clusterrolebindings',
      }),
    ).toBe(false);
  });

  it("(a) an ApplySet without serviceAccountName is applied as the namespace's deployer and becomes Ready", async () => {
    git = await servers.start({
      files: {
        'one.yaml': configMapYaml('tenant-one', { k: '1' }),
        'two.yaml': configMapYaml('tenant-two', { k: '2' }),
      },
    });
    await createApplySet(c, teamA, 'apps', { url: git.url, deletionPolicy: 'Delete' });
    const ready = await waitForAppliedCommit(c, teamA, 'apps', await git.revParse('main'), 30_000);
    expect(ready.status?.summary).toMatchObject({ applied: 2, failed: 0 });
    expect(ready.metadata.finalizers).toContain('applyset.dev/finalizer');
    expect(await configMapData(c, teamA, 'tenant-one')).toEqual({ k: '1' });
    expect(await configMapData(c, teamA, 'tenant-two')).toEqual({ k: '2' });
    // The set's inventory is on the ApplySet, written by the controller as itself: the tenant's Role
    // has no rights on applysets at all.
    const inventory = ready.metadata.annotations?.[MetadataKeys.lastAppliedObjects] ?? '';
    expect(inventory.split('\n')).toEqual(
      expect.arrayContaining([`${teamA}::ConfigMap:tenant-one`, `${teamA}::ConfigMap:tenant-two`]),
    );
  });

  it('(b) a ClusterRoleBinding to cluster-admin in the same repository is refused with a 403, and not created', async () => {
    await git.writeFiles({ 'escalate.yaml': clusterAdminBindingYaml(escalation, teamA, DEFAULT_ACCOUNT) });
    const refused = await waitForReady(c, teamA, 'apps', 'False', (view) =>
      (view.status?.errors?.items ?? []).some((e) => e.object.includes(escalation)),
    );
    expect(condition(refused, 'Ready')).toMatchObject({ reason: 'ApplyFailed' });
    expect(condition(refused, 'Ready')?.message).toContain(`ClusterRoleBinding:${escalation}`);
    expect(refused.status?.errors?.items).toEqual([
      {
        object: `:rbac.authorization.k8s.io:ClusterRoleBinding:${escalation}`,
        message: expect.stringContaining('403 Forbidden'),
      },
    ]);
    expect(refused.status?.errors?.items[0]?.message).toContain(`User "${tenantUser()}"`);
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });
    // The set's ConfigMaps are untouched.
    expect(await configMapData(c, teamA, 'tenant-one')).toEqual({ k: '1' });
    expect(await configMapData(c, teamA, 'tenant-two')).toEqual({ k: '2' });
  });

  it('(c) a ConfigMap naming another namespace is refused with a 403, and not created', async () => {
    await git.deleteFiles(['escalate.yaml']);
    await git.writeFiles({ 'elsewhere.yaml': configMapYaml('planted', { k: 'v' }, other) });
    const refused = await waitForReady(c, teamA, 'apps', 'False', (view) => {
      const objects = (view.status?.errors?.items ?? []).map((e) => e.object);
      return objects.includes(`${other}::ConfigMap:planted`) && !objects.some((o) => o.includes(escalation));
    });
    expect(condition(refused, 'Ready')).toMatchObject({ reason: 'ApplyFailed' });
    expect(refused.status?.errors?.items).toEqual([
      { object: `${other}::ConfigMap:planted`, message: expect.stringContaining('403 Forbidden') },
    ]);
    expect(refused.status?.errors?.items[0]?.message).toContain(`User "${tenantUser()}"`);
    expect(await configMapData(c, other, 'planted')).toBeUndefined();
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });
    expect(await configMapData(c, teamA, 'tenant-one')).toEqual({ k: '1' });
    expect(await configMapData(c, teamA, 'tenant-two')).toEqual({ k: '2' });
  });

  it("(e) a secretRef to another namespace's Secret is refused before that Secret is read or Git is asked", async () => {
    const guarded = await servers.start({
      files: { 'cm.yaml': configMapYaml('borrowed', { k: 'v' }) },
      auth: { username: 'deploy', password: 'other-team-password' },
    });
    // The other team's credentials are right for this server and name its host: only the namespace is wrong.
    await c.core.createNamespacedSecret({
      namespace: other,
      body: {
        metadata: { name: 'git-credentials', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { username: 'deploy', password: 'other-team-password' },
      },
    });
    await createApplySet(c, teamA, 'borrowing', {
      url: guarded.url,
      secretName: 'git-credentials',
      secretNamespace: other,
    });
    const refused = await waitForReady(c, teamA, 'borrowing', 'False', (view) =>
      Boolean(condition(view, 'Stalled')?.status === 'True'),
    );
    expect(condition(refused, 'Stalled')?.reason).toBe('CrossNamespaceRefRefused');
    expect(condition(refused, 'Ready')?.message).toBe(
      `spec.source.secretRef names Secret ${other}/git-credentials of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied`,
    );
    expect(guarded.requests).toEqual([]);
    expect(await configMapData(c, teamA, 'borrowed')).toBeUndefined();
    expect(JSON.stringify(refused)).not.toContain('other-team-password');
    await kubectl(['-n', teamA, 'delete', 'applysets.applyset.dev/borrowing']);
  });

  it('(d) the ApplySet deleted (deletionPolicy Delete) prunes its ConfigMaps as the tenant account', async () => {
    // Back to a clean repository first: Ready again.
    const clean = await git.deleteFiles(['elsewhere.yaml']);
    await waitForAppliedCommit(c, teamA, 'apps', clean, 30_000);
    // The controller's own account may not delete ConfigMaps (the premise): whoever prunes them is the
    // deployer the controller impersonates.
    await kubectl(['-n', teamA, 'delete', 'applysets.applyset.dev/apps', '--wait=false']);
    await waitFor(
      'the ApplySet to be gone (its finalizer released after pruning)',
      async () => ((await getApplySet(c, teamA, 'apps')) === undefined ? true : undefined),
      30_000,
    );
    expect(await configMapData(c, teamA, 'tenant-one')).toBeUndefined();
    expect(await configMapData(c, teamA, 'tenant-two')).toBeUndefined();
    expect(await configMapData(c, other, 'planted')).toBeUndefined();
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });
    expect(await controller.process.stop()).toBe(0);
  });
});
