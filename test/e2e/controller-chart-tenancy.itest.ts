import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import * as yaml from 'js-yaml';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  kubectl,
  kubectlApply,
  repoRoot,
  startController,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';

// The chart's locked-down tenancy mode, for real: the controller runs as the chart's ServiceAccount with
// exactly the RBAC the chart renders for tenancy.defaultServiceAccount=deployer and rbac.childRules=[]
// (no rights on children of its own), with the flags the chart's Deployment passes. A tenant has only a
// namespaced Role. Whatever an ApplySet does, it does as the tenant's account, and no more.

const execFileAsync = promisify(execFile);
const DEFAULT_ACCOUNT = 'deployer';

interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

interface RenderedDeployment extends RenderedObject {
  readonly spec: { readonly template: { readonly spec: { readonly containers: { args?: string[] }[] } } };
}

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** `helm template` of the chart in its locked-down tenancy mode. */
async function renderLockedDownChart(release: string, namespace: string): Promise<RenderedObject[]> {
  const { stdout: helmOut } = await execFileAsync('bash', [
    path.join(repoRoot, 'scripts/build-helm.sh'),
    '--check',
  ]);
  const helm = helmOut.trim().split('\n').pop() ?? '';
  const { stdout } = await execFileAsync(helm, [
    'template',
    release,
    path.join(repoRoot, 'deploy/applyset-controller'),
    '--namespace',
    namespace,
    '--set',
    `tenancy.defaultServiceAccount=${DEFAULT_ACCOUNT}`,
    '--set-json',
    'rbac.childRules=[]',
  ]);
  return yaml
    .loadAll(stdout)
    .filter((doc): doc is RenderedObject => typeof doc === 'object' && doc !== null && 'kind' in doc);
}

/** The Deployment's arguments, minus the subcommand and the listen address (a free local port here). */
function controllerArgs(deployment: RenderedDeployment): string[] {
  const args = [...(deployment.spec.template.spec.containers[0]?.args ?? [])];
  expect(args[0]).toBe('controller');
  args.shift();
  const metrics = args.indexOf('--metrics-addr');
  if (metrics >= 0) args.splice(metrics, 2);
  return args;
}

const clusterAdminBinding = (name: string, namespace: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${name}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: ${DEFAULT_ACCOUNT}
    namespace: ${namespace}
`;

describe("the controller with the chart's locked-down tenancy RBAC", () => {
  const c = cluster();
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const authz = c.kc.makeApiClient(k8s.AuthorizationV1Api);
  const release = uniqueName('rel-tenancy');
  const releaseNamespace = uniqueName('e2e-chart-tenancy');
  const teamA = uniqueName('team-a');
  const other = uniqueName('team-other');
  const servers: GitTestServer[] = [];
  const clusterScoped: RenderedObject[] = [];
  let controllerUser = '';
  let controller: ControllerProcess | undefined;

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
    await createNamespace(c.kc, releaseNamespace);
    await createNamespace(c.kc, teamA);
    await createNamespace(c.kc, other);

    // The chart's RBAC objects only: no Deployment, the controller runs here as its own process.
    const rendered = await renderLockedDownChart(release, releaseNamespace);
    const rbacObjects = rendered.filter((doc) => RBAC_KINDS.has(doc.kind));
    // childRules=[] renders no <fullname>-children role: one ClusterRole, the controller's own.
    expect(rbacObjects.filter((doc) => doc.kind === 'ClusterRole').map((doc) => doc.metadata.name)).toEqual([
      `${release}-applyset-controller`,
    ]);
    clusterScoped.push(...rbacObjects.filter((doc) => doc.kind.startsWith('Cluster')));
    await kubectlApply(rbacObjects.map((doc) => JSON.stringify(doc)).join('\n'));
    const serviceAccount = rbacObjects.find((doc) => doc.kind === 'ServiceAccount');
    if (serviceAccount === undefined) throw new Error('the chart rendered no ServiceAccount');
    controllerUser = `system:serviceaccount:${releaseNamespace}:${serviceAccount.metadata.name}`;
    const kubeconfig = await kubeconfigForServiceAccount(releaseNamespace, serviceAccount.metadata.name);

    const deployment = rendered.find((doc): doc is RenderedDeployment => doc.kind === 'Deployment');
    if (deployment === undefined) throw new Error('the chart rendered no Deployment');
    const args = controllerArgs(deployment);
    expect(args).toEqual(
      expect.arrayContaining(['--default-service-account', DEFAULT_ACCOUNT, '--require-secret-source-hosts']),
    );
    expect(args[args.indexOf('--default-service-account') + 1]).toBe(DEFAULT_ACCOUNT);

    // The tenant: a deployer account with a Role in team-a, nothing cluster-scoped.
    await c.core.createNamespacedServiceAccount({
      namespace: teamA,
      body: { metadata: { name: DEFAULT_ACCOUNT } },
    });
    await rbac.createNamespacedRole({
      namespace: teamA,
      body: {
        metadata: { name: DEFAULT_ACCOUNT },
        rules: [
          {
            apiGroups: [''],
            resources: ['configmaps'],
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
          },
          { apiGroups: ['applyset.dev'], resources: ['applysets'], verbs: ['get', 'patch', 'update'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: teamA,
      body: {
        metadata: { name: DEFAULT_ACCOUNT },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: DEFAULT_ACCOUNT },
        subjects: [{ kind: 'ServiceAccount', name: DEFAULT_ACCOUNT, namespace: teamA }],
      },
    });

    controller = await startController({
      namespace: teamA,
      kubeconfig,
      args,
      env: { POD_NAME: `${release}-0`, POD_NAMESPACE: releaseNamespace },
    });
  });

  afterAll(async () => {
    await stopAllControllers();
    await Promise.all(servers.map((server) => server.close()));
    for (const doc of clusterScoped) {
      await kubectl([
        'delete',
        '--ignore-not-found',
        `${doc.kind.toLowerCase()}.rbac.authorization.k8s.io/${doc.metadata.name}`,
      ]);
    }
  });

  const tenantUser = () => `system:serviceaccount:${teamA}:${DEFAULT_ACCOUNT}`;
  const escalation = uniqueName('tenant-escalation');
  let git: GitTestServer;

  it("the premise, by the authorizer: the controller's account has no rights on children, the tenant only team-a's ConfigMaps", async () => {
    for (const verb of ['create', 'update', 'patch', 'delete']) {
      expect(
        await mayServiceAccount(controllerUser, { namespace: teamA, verb, resource: 'configmaps' }),
      ).toBe(false);
    }
    expect(
      await mayServiceAccount(controllerUser, {
        verb: 'create',
        group: 'rbac.authorization.k8s.io',
        resource: 'clusterrolebindings',
      }),
    ).toBe(false);
    // kubectl says the same.
    await expect(
      kubectl(['auth', 'can-i', 'create', 'configmaps', '-n', teamA, '--as', controllerUser]),
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
    git = await startGitServer({
      files: {
        'one.yaml': configMapYaml('tenant-one', { k: '1' }),
        'two.yaml': configMapYaml('tenant-two', { k: '2' }),
      },
    });
    servers.push(git);
    await createApplySet(c, teamA, 'apps', { url: git.url, deletionPolicy: 'Delete' });
    const ready = await waitForAppliedCommit(c, teamA, 'apps', await git.revParse('main'), 30_000);
    expect(ready.status?.summary).toMatchObject({ applied: 2, failed: 0 });
    expect(ready.metadata.finalizers).toContain('applyset.dev/finalizer');
    expect(await configMapData(c, teamA, 'tenant-one')).toEqual({ k: '1' });
    expect(await configMapData(c, teamA, 'tenant-two')).toEqual({ k: '2' });
    // The set's inventory is on the ApplySet (the README: written with the deployer's identity, which
    // is why the tenant's Role has get/patch/update on applysets).
    const inventory = ready.metadata.annotations?.[MetadataKeys.lastAppliedObjects] ?? '';
    expect(inventory.split('\n')).toEqual(
      expect.arrayContaining([`${teamA}::ConfigMap:tenant-one`, `${teamA}::ConfigMap:tenant-two`]),
    );
  });

  it('(b) a ClusterRoleBinding to cluster-admin in the same repository is refused with a 403, and not created', async () => {
    await git.writeFiles({ 'escalate.yaml': clusterAdminBinding(escalation, teamA) });
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
    expect(await controller?.stop()).toBe(0);
  });
});
