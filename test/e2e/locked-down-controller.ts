import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import * as yaml from 'js-yaml';
import {
  adminKubeConfig,
  createNamespace,
  kubeconfigForServiceAccount,
  uniqueName,
} from '../harness/test-cluster.js';
import {
  kubectl,
  kubectlApply,
  repoRoot,
  startController,
  type Cluster,
  type ControllerProcess,
} from './e2e-kit.js';

// The controller as the chart installs it in its locked-down tenancy mode, for the e2e scenarios of
// issue #9: the RBAC objects `helm template` renders for tenancy.defaultServiceAccount and
// rbac.childRules=[] (the controller holds no rights on children at all), bound to the chart's
// ServiceAccount, and the controller running as that account with exactly the arguments the chart's
// Deployment passes. Tenants get namespaced Roles of their own (createTenantAccount).

const execFileAsync = promisify(execFile);

/** The account every ApplySet without spec.serviceAccountName is applied as, in its own namespace. */
export const DEFAULT_ACCOUNT = 'deployer';

/** Every verb the engine uses on `resources` of the core group. */
export const coreRule = (...resources: string[]): k8s.V1PolicyRule => ({
  apiGroups: [''],
  resources,
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
});

interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

interface RenderedDeployment extends RenderedObject {
  readonly spec: { readonly template: { readonly spec: { readonly containers: { args?: string[] }[] } } };
}

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/**
 * `helm template` of the chart in its locked-down tenancy mode (the default account named `deployer`,
 * childRules=[]), plus `values` (`--set`); with `chartDefaults`, the chart's own defaults and `values`
 * only.
 */
async function renderLockedDownChart(
  release: string,
  namespace: string,
  values: Readonly<Record<string, string>> = {},
  chartDefaults = false,
): Promise<RenderedObject[]> {
  const { stdout: helmOut } = await execFileAsync('bash', [
    path.join(repoRoot, 'scripts/build-helm.sh'),
    '--check',
  ]);
  const helm = helmOut.trim().split('\n').pop() ?? '';
  const sets = Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]);
  const { stdout } = await execFileAsync(helm, [
    'template',
    release,
    path.join(repoRoot, 'deploy/applyset-controller'),
    '--namespace',
    namespace,
    ...(chartDefaults
      ? []
      : ['--set', `tenancy.defaultServiceAccount=${DEFAULT_ACCOUNT}`, '--set-json', 'rbac.childRules=[]']),
    ...sets,
  ]);
  return yaml
    .loadAll(stdout)
    .filter((doc): doc is RenderedObject => typeof doc === 'object' && doc !== null && 'kind' in doc);
}

/**
 * The Deployment's arguments, minus the subcommand and the listen address (a free local port here), and
 * the web view's address, when the chart passes one, as a free loopback port.
 */
function controllerArgs(rendered: readonly RenderedObject[]): string[] {
  const deployment = rendered.find((doc): doc is RenderedDeployment => doc.kind === 'Deployment');
  if (deployment === undefined) throw new Error('the chart rendered no Deployment');
  const args = [...(deployment.spec.template.spec.containers[0]?.args ?? [])];
  if (args[0] !== 'controller')
    throw new Error(`the chart's Deployment runs ${String(args[0])}, not controller`);
  args.shift();
  const metrics = args.indexOf('--metrics-addr');
  if (metrics >= 0) args.splice(metrics, 2);
  const ui = args.indexOf('--ui-address');
  if (ui >= 0) args.splice(ui + 1, 1, '127.0.0.1:0');
  return args;
}

export interface LockedDownController {
  readonly process: ControllerProcess;
  /** `system:serviceaccount:<release namespace>:<chart account>`: who the controller is. */
  readonly user: string;
  /** The chart's rendered objects, for tests that check the premise. */
  readonly rendered: readonly RenderedObject[];
  readonly args: readonly string[];
  /** Deletes the cluster-scoped RBAC objects (the namespaced ones go with the test's namespaces). */
  cleanup(): Promise<void>;
}

/**
 * Installs the chart's RBAC in a release namespace of its own and starts the controller as the chart's
 * ServiceAccount, watching `namespace`, with the chart's arguments for the locked-down mode plus
 * `values`. The release name is unique, so suites running side by side do not share roles.
 */
export async function startLockedDownController(options: {
  /** The namespace to watch; undefined: every namespace (with a watchLabelSelector among the values). */
  readonly namespace: string | undefined;
  readonly values?: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
  /** Arguments after the chart's (`--kustomize-binary PATH`: the image has kustomize, a test host may not). */
  readonly args?: readonly string[];
  /** The chart's default values rather than the locked-down ones (issue #23: they are the same mode). */
  readonly chartDefaults?: boolean;
  /** false: no `--internal-notification-hosts 127.0.0.1` of the harness's; the chart's values alone. */
  readonly allowLoopbackNotifications?: boolean;
}): Promise<LockedDownController> {
  const release = uniqueName('rel');
  const releaseNamespace = uniqueName('e2e-release');
  await createNamespace(adminKubeConfig(), releaseNamespace);
  const rendered = await renderLockedDownChart(
    release,
    releaseNamespace,
    options.values,
    options.chartDefaults,
  );
  const rbacObjects = rendered.filter((doc) => RBAC_KINDS.has(doc.kind));
  const clusterScoped = rbacObjects.filter((doc) => doc.kind.startsWith('Cluster'));
  await kubectlApply(rbacObjects.map((doc) => JSON.stringify(doc)).join('\n'));
  const serviceAccount = rbacObjects.find((doc) => doc.kind === 'ServiceAccount');
  if (serviceAccount === undefined) throw new Error('the chart rendered no ServiceAccount');
  const kubeconfig = await kubeconfigForServiceAccount(releaseNamespace, serviceAccount.metadata.name);
  const args = [...controllerArgs(rendered), ...(options.args ?? [])];
  const process = await startController({
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    kubeconfig,
    args,
    // The suites make the tenants' accounts themselves, with the rights they mean to test.
    provisionDeployer: false,
    ...(options.allowLoopbackNotifications === false ? { allowLoopbackNotifications: false } : {}),
    env: { POD_NAME: `${release}-0`, POD_NAMESPACE: releaseNamespace, ...options.env },
  });
  return {
    process,
    user: `system:serviceaccount:${releaseNamespace}:${serviceAccount.metadata.name}`,
    rendered,
    args,
    async cleanup() {
      // The controller goes first (its Git cache with it), whether or not the suite stopped it.
      await process.stop('SIGKILL');
      for (const doc of clusterScoped) {
        await kubectl([
          'delete',
          '--ignore-not-found',
          `${doc.kind.toLowerCase()}.rbac.authorization.k8s.io/${doc.metadata.name}`,
        ]);
      }
    },
  };
}

/** A tenant's ServiceAccount `name` in `namespace`, bound to a Role of `rules` there and nothing else. */
export async function createTenantAccount(
  c: Cluster,
  namespace: string,
  name: string,
  rules: readonly k8s.V1PolicyRule[],
): Promise<void> {
  await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await grantAccountIn(c, { namespace, name }, namespace, rules);
}

/** Gives the ServiceAccount `account` a Role of `rules` in `namespace` (its own, or another one). */
export async function grantAccountIn(
  c: Cluster,
  account: { readonly namespace: string; readonly name: string },
  namespace: string,
  rules: readonly k8s.V1PolicyRule[],
): Promise<void> {
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const name = account.namespace === namespace ? account.name : `${account.namespace}-${account.name}`;
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: [...rules] } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: account.name, namespace: account.namespace }],
    },
  });
}
