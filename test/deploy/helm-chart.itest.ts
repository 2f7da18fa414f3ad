import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { chart, findHelm } from './helm-chart-kit.js';

// Installs the chart into the real control plane and asks the API server's own authorizer (through
// SubjectAccessReviews) whether the chart's ServiceAccount may do what the controller does. The unit
// chart test checks the rendered rules; this one checks that the API server reads them the same way.

const execFileAsync = promisify(execFile);

function kubeconfigPath(): string {
  const value = process.env['APPLYSET_TEST_KUBECONFIG'];
  if (value === undefined || value === '') throw new Error('APPLYSET_TEST_KUBECONFIG is not set by the global setup');
  return value;
}

interface Install {
  readonly release: string;
  readonly namespace: string;
  readonly user: string;
}

let helm = '';
let kc: k8s.KubeConfig;
const installs: Install[] = [];

async function install(values: readonly string[]): Promise<Install> {
  const suffix = randomBytes(4).toString('hex');
  const release = `chart-${suffix}`;
  const namespace = `asc-chart-${suffix}`;
  const args = ['install', release, chart, '--namespace', namespace, '--create-namespace'];
  await execFileAsync(helm, [...args, '--kubeconfig', kubeconfigPath(), ...values.flatMap((v) => ['--set', v])]);
  const installed = {
    release,
    namespace,
    user: `system:serviceaccount:${namespace}:${release}-applyset-controller`,
  };
  installs.push(installed);
  return installed;
}

async function allowed(
  user: string,
  attributes: {
    group: string;
    resource: string;
    subresource?: string;
    verb: string;
    namespace?: string;
    name?: string;
  },
): Promise<boolean> {
  const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${user.split(':')[2] ?? ''}`, 'system:authenticated'],
        resourceAttributes: attributes,
      },
    },
  });
  return review.status?.allowed === true;
}

// [group, resource, subresource, verbs]
const controllerNeeds: [string, string, string, string[]][] = [
  ['applyset.dev', 'applysets', '', ['get', 'list', 'watch', 'update', 'patch']],
  ['applyset.dev', 'applysets', 'status', ['get', 'update', 'patch']],
  ['applyset.dev', 'applysets', 'finalizers', ['update']],
  ['applyset.dev', 'notifications', '', ['get', 'list', 'watch']],
  ['applyset.dev', 'notifications', 'status', ['patch']],
  ['', 'events', '', ['create', 'patch']],
  ['', 'serviceaccounts', '', ['get', 'list', 'watch']],
];

/**
 * What the controller needs and is not granted in `namespace`; `impersonates`: the accounts it must be
 * able to act as (the default one unless tenancy.applyAsController), which it may impersonate by name only.
 */
async function denied(user: string, namespace: string, impersonates = ['applyset-deployer']): Promise<string[]> {
  const missing: string[] = [];
  for (const name of impersonates)
    if (!(await allowed(user, { group: '', resource: 'serviceaccounts', verb: 'impersonate', namespace, name })))
      missing.push(`impersonate serviceaccounts/${name} in ${namespace}`);
  for (const [group, resource, subresource, verbs] of controllerNeeds)
    for (const verb of verbs)
      if (!(await allowed(user, { group, resource, subresource, verb, namespace })))
        missing.push(`${verb} ${resource}${subresource === '' ? '' : `/${subresource}`} in ${namespace}`);
  return missing;
}

beforeAll(async () => {
  helm = await findHelm();
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath());
});

afterAll(async () => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  for (const { release, namespace } of installs) {
    await execFileAsync(helm, ['uninstall', release, '--namespace', namespace, '--kubeconfig', kubeconfigPath()]);
    await core.deleteNamespace({ name: namespace });
  }
});

describe('the Helm chart on a real API server', () => {
  it('installs the CRD, the Deployment and cluster-wide rights that cover the controller', async () => {
    const { namespace, release, user } = await install([]);
    const crd = await kc
      .makeApiClient(k8s.ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'applysets.applyset.dev' });
    expect(crd.spec.group).toBe('applyset.dev');
    const deployment = await kc
      .makeApiClient(k8s.AppsV1Api)
      .readNamespacedDeployment({ name: `${release}-applyset-controller`, namespace });
    expect(deployment.spec?.template.spec?.serviceAccountName).toBe(`${release}-applyset-controller`);

    expect(await denied(user, 'default')).toEqual([]);
    // No right on children (issue #23): ApplySets are applied as accounts of their namespaces, and only
    // the default account may be impersonated.
    expect(await allowed(user, { group: 'apps', resource: 'deployments', verb: 'create', namespace: 'default' })).toBe(
      false,
    );
    expect(await allowed(user, { group: '', resource: 'namespaces', verb: 'delete' })).toBe(false);
    const impersonate = (name: string) =>
      allowed(user, { group: '', resource: 'serviceaccounts', verb: 'impersonate', namespace: 'default', name });
    expect([await impersonate('applyset-deployer'), await impersonate('ops'), await impersonate('default')]).toEqual([
      true,
      false,
      false,
    ]);
    expect(await allowed(user, { group: '', resource: 'groups', verb: 'impersonate' })).toBe(false);
    // Git credentials are read as each ApplySet's account: the controller may read no Secret.
    expect(await allowed(user, { group: '', resource: 'secrets', verb: 'get', namespace: 'default' })).toBe(false);
    for (const verb of ['get', 'create', 'update'])
      expect(await allowed(user, { group: 'coordination.k8s.io', resource: 'leases', verb, namespace })).toBe(true);
  }, 120_000);

  it('with children rights narrowed, the controller gets Secrets by name and can neither list nor watch them', async () => {
    const { user } = await install([
      'tenancy.applyAsController=true',
      'rbac.childRules[0].apiGroups[0]=apps',
      'rbac.childRules[0].resources[0]=deployments',
      'rbac.childRules[0].verbs[0]=patch',
    ]);
    expect(await denied(user, 'default', [])).toEqual([]);
    const secrets = (verb: string) => allowed(user, { group: '', resource: 'secrets', verb, namespace: 'default' });
    expect([await secrets('get'), await secrets('list'), await secrets('watch')]).toEqual([true, false, false]);
    expect(await allowed(user, { group: '', resource: 'secrets', verb: 'list' })).toBe(false);
  }, 120_000);

  it('with rbac.namespaced grants rights in the watched namespace and nowhere else', async () => {
    const { namespace, user } = await install(['rbac.namespaced=true', 'tenancy.applyAsController=true']);
    expect(await denied(user, namespace, [])).toEqual([]);
    expect(await allowed(user, { group: 'apps', resource: 'deployments', verb: 'create', namespace })).toBe(true);
    expect(await denied(user, 'default', [])).toHaveLength(controllerNeeds.flatMap(([, , , verbs]) => verbs).length);
    expect(await allowed(user, { group: 'apps', resource: 'deployments', verb: 'create', namespace: 'default' })).toBe(
      false,
    );
  }, 120_000);

  it('stores the NetworkPolicy of the default install, and a dry run accepts the webhook one with custom peers', async () => {
    const { namespace, release } = await install([]);
    const networking = kc.makeApiClient(k8s.NetworkingV1Api);
    const stored = await networking.readNamespacedNetworkPolicy({ name: `${release}-applyset-controller`, namespace });
    expect(stored.spec?.ingress?.map((rule) => rule.ports?.map((p) => p.port))).toEqual([['metrics']]);

    // Rendered with the webhook on and peers of every form the values document, then checked by the
    // server's own validation. It stores, and enforces nothing: that is the network plugin's part.
    const rendered = await execFileAsync(helm, [
      'template',
      release,
      chart,
      '--namespace',
      namespace,
      '--show-only',
      'templates/networkpolicy.yaml',
      '--set',
      'webhook.enabled=true',
      '--set',
      'webhook.secretName=hooks',
      '--set-json',
      'networkPolicy.webhook.from=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"ingress-nginx"}}},{"ipBlock":{"cidr":"192.0.2.0/24"}}]',
      '--set-json',
      'networkPolicy.metrics.from=[{"namespaceSelector":{}}]',
    ]);
    const applied = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', kubeconfigPath(), 'apply', '--dry-run=server', '-o', 'json', '-f', '-'],
        (error, stdout, stderr) =>
          error === null ? resolve(stdout) : reject(new Error(`kubectl apply: ${stderr}`, { cause: error })),
      );
      child.stdin?.end(rendered.stdout);
    });
    const policy = JSON.parse(applied) as {
      kind: string;
      spec?: { ingress?: { ports?: { port: string }[]; from?: unknown[] }[] };
    };
    expect(policy.kind).toBe('NetworkPolicy');
    expect(policy.spec?.ingress?.map((rule) => rule.ports?.map((p) => p.port))).toEqual([['metrics'], ['webhook']]);
    expect(policy.spec?.ingress?.[1]?.from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      { ipBlock: { cidr: '192.0.2.0/24' } },
    ]);
  }, 120_000);
});
