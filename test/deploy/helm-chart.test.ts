import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { imageNodeFlags } from '../harness/image-runtime.js';

// Renders the chart with a real helm (built from the Go module proxy by scripts/build-helm.sh) and checks
// the objects it would install. A missing helm fails the suite: CI builds it first, and a skipped chart
// test would let a broken chart land.

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const chart = path.join(root, 'deploy/applyset-controller');
const release = 'asc';
const releaseNamespace = 'applyset-system';
// helm renders in well under a second, but CI shares two cores with a control plane.
const HELM_TIMEOUT_MS = 60_000;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string | number } };
  readinessProbe: { httpGet: { path: string; port: string | number } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string }[];
}

interface PodSpec {
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; emptyDir?: Record<string, unknown> }[];
}

let helm = '';

async function findHelm(): Promise<string> {
  const override = process.env['APPLYSET_HELM'];
  if (override !== undefined && override !== '') return override;
  try {
    const { stdout } = await execFileAsync('bash', [path.join(root, 'scripts/build-helm.sh'), '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`helm is needed for the chart tests and is not built (${detail})`, { cause: error });
  }
}

async function runHelm(args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync(helm, [...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function render(values: Record<string, string> = {}, flags: readonly string[] = []): Promise<K8sObject[]> {
  const sets = Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]);
  const stdout = await runHelm(['template', release, chart, '--namespace', releaseNamespace, ...sets, ...flags]);
  return yaml.loadAll(stdout).filter((doc): doc is K8sObject => typeof doc === 'object' && doc !== null);
}

function find(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} among ${listObjects(objects)}`);
  return found;
}

function listObjects(objects: readonly K8sObject[]): string {
  return objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
}

function kinds(objects: readonly K8sObject[]): string[] {
  return objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
}

function controllerContainer(objects: readonly K8sObject[]): { pod: PodSpec; container: Container } {
  const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
    spec: { template: { spec: PodSpec } };
  };
  const pod = deployment.spec.template.spec;
  const container = pod.containers.find((c) => c.name === 'controller');
  if (container === undefined) throw new Error('no controller container');
  return { pod, container };
}

function rules(object: K8sObject): PolicyRule[] {
  return (object as unknown as { rules: PolicyRule[] }).rules;
}

/** Whether any rule grants verb on group/resource, with the wildcards RBAC understands. */
function allows(granted: readonly PolicyRule[], group: string, resource: string, verb: string): boolean {
  return granted.some(
    (rule) =>
      (rule.apiGroups ?? []).some((g) => g === '*' || g === group) &&
      (rule.resources ?? []).some((r) => r === '*' || r === resource) &&
      rule.verbs.some((v) => v === '*' || v === verb),
  );
}

const controllerNeeds: [string, string, string[]][] = [
  ['applyset.dev', 'applysets', ['get', 'list', 'watch', 'update', 'patch']],
  ['applyset.dev', 'applysets/status', ['get', 'update', 'patch']],
  ['applyset.dev', 'applysets/finalizers', ['update']],
  ['', 'events', ['create', 'patch']],
  ['events.k8s.io', 'events', ['create', 'patch']],
  ['', 'serviceaccounts', ['get', 'impersonate']],
];

beforeAll(async () => {
  helm = await findHelm();
}, HELM_TIMEOUT_MS);

describe('helm lint', () => {
  it.each([
    ['the default values', []],
    ['namespaced RBAC', ['--set', 'rbac.namespaced=true']],
  ])('passes with %s', async (_name, flags) => {
    const out = await runHelm(['lint', chart, '--strict', ...flags]);
    expect(out).toContain('0 chart(s) failed');
  }, HELM_TIMEOUT_MS);
});

describe('the chart with default values', () => {
  let objects: K8sObject[] = [];
  beforeAll(async () => {
    objects = await render();
  }, HELM_TIMEOUT_MS);

  it('renders the controller and everything it needs, cluster-wide', () => {
    const name = `${release}-applyset-controller`;
    expect(kinds(objects)).toEqual(
      [
        `ClusterRole//${name}`,
        `ClusterRoleBinding//${name}`,
        `Deployment/${releaseNamespace}/${name}`,
        `NetworkPolicy/${releaseNamespace}/${name}`,
        `Role/${releaseNamespace}/${name}-leader-election`,
        `RoleBinding/${releaseNamespace}/${name}-leader-election`,
        `Service/${releaseNamespace}/${name}-metrics`,
        `ServiceAccount/${releaseNamespace}/${name}`,
      ].sort(),
    );
  });

  it('runs the controller subcommand with leader election on all namespaces', () => {
    const { container } = controllerContainer(objects);
    expect(container.image).toBe('applyset-controller:0.1.0');
    // The image's node flags (its ENTRYPOINT), which the controller bench measures.
    expect(container.command).toEqual(['node', ...imageNodeFlags(), '/app/bin/applyset.js']);
    expect(container.args).toEqual([
      'controller',
      '--metrics-addr',
      ':8080',
      '--leader-elect',
      '--concurrency',
      '4',
      '--git-max-object-bytes',
      '16Mi',
      '--git-max-fetch-bytes',
      '48Mi',
      '--git-max-fetch-objects',
      '50000',
      '--git-cache-max-bytes',
      '768Mi',
      '--git-cache-max-repository-bytes',
      '256Mi',
    ]);
    expect(container.env).toContainEqual({ name: 'LOG_LEVEL', value: 'info' });
  });

  it('runs as non-root with a read-only root filesystem and no capabilities', () => {
    const { pod, container } = controllerContainer(objects);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('gives the Git cache, HOME and TMPDIR writable volumes', () => {
    const { pod, container } = controllerContainer(objects);
    expect(container.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'git-cache', mountPath: '/var/cache/applyset' },
        { name: 'tmp', mountPath: '/tmp' },
      ]),
    );
    for (const name of ['git-cache', 'tmp'])
      expect(pod.volumes.find((v) => v.name === name)?.emptyDir).toBeDefined();
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: 'APPLYSET_GIT_CACHE_DIR', value: '/var/cache/applyset' },
        { name: 'HOME', value: '/tmp' },
        { name: 'TMPDIR', value: '/tmp' },
      ]),
    );
  });

  it('probes /healthz and /readyz on the metrics port and sets resources', () => {
    const { container } = controllerContainer(objects);
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: 8080, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits).toMatchObject({ memory: expect.any(String) });
  });

  it('passes the pod name and namespace for leader election', () => {
    const { container } = controllerContainer(objects);
    const fieldOf = (name: string): unknown => container.env.find((e) => e.name === name)?.valueFrom;
    expect(fieldOf('POD_NAME')).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(fieldOf('POD_NAMESPACE')).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
  });

  it.each(controllerNeeds)('lets the controller use %s/%s', (group, resource, verbs) => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    for (const verb of verbs) expect([verb, allows(role, group, resource, verb)]).toEqual([verb, true]);
  });

  it('grants the controller itself nothing beyond what it needs', () => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(role.flatMap((r) => [...(r.apiGroups ?? []), ...(r.resources ?? []), ...r.verbs])).not.toContain('*');
    expect(allows(role, '', 'secrets', 'create')).toBe(false);
    // Secrets are read by name: no list or watch, which would hand over every Secret of the cluster.
    expect(allows(role, '', 'secrets', 'list')).toBe(false);
    expect(allows(role, '', 'secrets', 'watch')).toBe(false);
  });

  it('grants the controller no right on the children: ApplySets are applied as accounts of their namespaces', () => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(objects.filter((o) => o.metadata.name.endsWith('-children'))).toEqual([]);
    for (const [group, resource] of [
      ['', 'configmaps'],
      ['apps', 'deployments'],
      ['rbac.authorization.k8s.io', 'clusterrolebindings'],
    ] as const) {
      for (const verb of ['create', 'update', 'patch', 'delete']) expect(allows(role, group, resource, verb)).toBe(false);
    }
  });

  it('lets the controller impersonate applyset-deployer only, by name', () => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(role.filter((rule) => rule.verbs.includes('impersonate'))).toEqual([
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['applyset-deployer'] },
    ]);
    // Nothing else is impersonated: no groups, users, uids or extras.
    for (const resource of ['groups', 'users', 'uids', 'userextras'])
      expect(allows(role, '', resource, 'impersonate')).toBe(false);
  });

  it('binds the controller role to the ServiceAccount', () => {
    for (const name of [`${release}-applyset-controller`]) {
      expect(find(objects, 'ClusterRoleBinding', name)).toMatchObject({
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name: `${release}-applyset-controller`, namespace: releaseNamespace }],
      });
    }
    expect(controllerContainer(objects).pod.serviceAccountName).toBe(`${release}-applyset-controller`);
  });

  it('lets the controller hold a Lease and record events in its own namespace', () => {
    const role = find(objects, 'Role', `${release}-applyset-controller-leader-election`);
    expect(role.metadata.namespace).toBe(releaseNamespace);
    for (const verb of ['get', 'create', 'update', 'patch'])
      expect(allows(rules(role), 'coordination.k8s.io', 'leases', verb)).toBe(true);
    expect(allows(rules(role), '', 'events', 'create')).toBe(true);
  });

  it('exposes the metrics port through a Service selecting the controller pods', () => {
    const service = find(objects, 'Service', `${release}-applyset-controller-metrics`) as unknown as {
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
    };
    expect(service.spec.ports).toEqual([{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }]);
    const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
  });

  it('admits connections to the metrics port only, from the release namespace and the scrapers', () => {
    const policy = networkPolicy(objects);
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: selectorLabels(objects) },
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: [{ port: 'metrics', protocol: 'TCP' }],
          from: [
            { podSelector: {} },
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
            { namespaceSelector: { matchLabels: { 'applyset.dev/metrics-scraper': 'true' } } },
          ],
        },
      ],
    });
  });

  it('ships the CRD, identical to crds/', async () => {
    const withCrds = await render({}, ['--include-crds']);
    const crd = find(withCrds, 'CustomResourceDefinition', 'applysets.applyset.dev');
    expect(crd).toEqual(yaml.load(readFileSync(path.join(root, 'crds/applyset.dev_applysets.yaml'), 'utf8')));
  }, HELM_TIMEOUT_MS);
});

interface NetworkPolicySpec {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: { ports: { port: string; protocol: string }[]; from?: Record<string, unknown>[] }[];
}

function networkPolicy(objects: readonly K8sObject[]): { spec: NetworkPolicySpec } {
  return find(objects, 'NetworkPolicy', `${release}-applyset-controller`) as unknown as { spec: NetworkPolicySpec };
}

function selectorLabels(objects: readonly K8sObject[]): Record<string, string> {
  const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
    spec: { selector: { matchLabels: Record<string, string> } };
  };
  return deployment.spec.selector.matchLabels;
}

describe('the chart NetworkPolicy', () => {
  it('admits the webhook port from anywhere when the webhook is on, or from the peers the values name', async () => {
    const hooks = { 'webhook.enabled': 'true', 'webhook.secretName': 'hooks' };
    const open = networkPolicy(await render(hooks)).spec.ingress;
    expect(open).toHaveLength(2);
    // No `from`: every source, as forges call from outside the cluster.
    expect(open[1]).toEqual({ ports: [{ port: 'webhook', protocol: 'TCP' }] });
    const ingressNginx = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
    const narrowed = networkPolicy(
      await render(hooks, ['--set-json', `networkPolicy.webhook.from=${JSON.stringify([ingressNginx])}`]),
    ).spec.ingress;
    expect(narrowed[1]).toEqual({
      ports: [{ port: 'webhook', protocol: 'TCP' }],
      from: [ingressNginx],
    });
  }, HELM_TIMEOUT_MS);

  it('admits the metrics port from the release namespace alone, or from the peers the values name', async () => {
    const alone = networkPolicy(await render({}, ['--set-json', 'networkPolicy.metrics.from=[]'])).spec.ingress;
    expect(alone).toEqual([{ ports: [{ port: 'metrics', protocol: 'TCP' }], from: [{ podSelector: {} }] }]);
    const everywhere = networkPolicy(
      await render({}, ['--set-json', 'networkPolicy.metrics.from=[{"namespaceSelector":{}}]']),
    ).spec.ingress;
    expect(everywhere[0]?.from).toEqual([{ podSelector: {} }, { namespaceSelector: {} }]);
  }, HELM_TIMEOUT_MS);

  it('is left out with one value', async () => {
    const objects = await render({ 'networkPolicy.enabled': 'false' });
    expect(objects.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
  }, HELM_TIMEOUT_MS);
});

describe('the chart with rbac.namespaced=true', () => {
  it('grants rights in the watched namespace only and watches only it', async () => {
    const objects = await render({ 'rbac.namespaced': 'true', watchNamespace: 'team-a' });
    const name = `${release}-applyset-controller`;
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    expect(objects.filter((o) => o.metadata.name.endsWith('-children'))).toEqual([]);
    for (const roleName of [name]) {
      expect(find(objects, 'Role', roleName).metadata.namespace).toBe('team-a');
      expect(find(objects, 'RoleBinding', roleName)).toMatchObject({
        metadata: { namespace: 'team-a' },
        roleRef: { kind: 'Role', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name, namespace: releaseNamespace }],
      });
    }
    const role = rules(find(objects, 'Role', name));
    for (const [group, resource, verbs] of controllerNeeds)
      for (const verb of verbs) expect([resource, verb, allows(role, group, resource, verb)]).toEqual([resource, verb, true]);
    expect(find(objects, 'Role', `${name}-leader-election`).metadata.namespace).toBe(releaseNamespace);
    expect(controllerContainer(objects).container.args).toEqual([
      'controller',
      '--metrics-addr',
      ':8080',
      '--leader-elect',
      '--concurrency',
      '4',
      '--namespace',
      'team-a',
      '--git-max-object-bytes',
      '16Mi',
      '--git-max-fetch-bytes',
      '48Mi',
      '--git-max-fetch-objects',
      '50000',
      '--git-cache-max-bytes',
      '768Mi',
      '--git-cache-max-repository-bytes',
      '256Mi',
    ]);
  }, HELM_TIMEOUT_MS);

  it('watches the release namespace when no namespace is given', async () => {
    const objects = await render({ 'rbac.namespaced': 'true' });
    expect(find(objects, 'Role', `${release}-applyset-controller`).metadata.namespace).toBe(releaseNamespace);
    const args = controllerContainer(objects).container.args;
    expect(args.slice(args.indexOf('--namespace'), args.indexOf('--namespace') + 2)).toEqual([
      '--namespace',
      releaseNamespace,
    ]);
  }, HELM_TIMEOUT_MS);
});

describe('the chart values', () => {
  it('set image, replicas, concurrency, log level and the watched namespace', async () => {
    const objects = await render({
      'image.repository': 'registry.local/applyset',
      'image.tag': 'dev',
      replicas: '3',
      concurrency: '8',
      logLevel: 'debug',
      watchNamespace: 'apps',
    });
    const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
      spec: { replicas: number };
    };
    expect(deployment.spec.replicas).toBe(3);
    const { container } = controllerContainer(objects);
    expect(container.image).toBe('registry.local/applyset:dev');
    expect(container.args).toEqual(expect.arrayContaining(['--concurrency', '8', '--namespace', 'apps']));
    expect(container.env).toContainEqual({ name: 'LOG_LEVEL', value: 'debug' });
    // Cluster-wide RBAC still: watching one namespace does not by itself narrow the roles.
    expect(objects.some((o) => o.kind === 'ClusterRole')).toBe(true);
  }, HELM_TIMEOUT_MS);

  it('under tenancy.applyAsController, grant every verb on every resource for the children, in a role of its own', async () => {
    const objects = await render({ 'tenancy.applyAsController': 'true' });
    const children = `${release}-applyset-controller-children`;
    expect(rules(find(objects, 'ClusterRole', children))).toEqual([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]);
    expect(find(objects, 'ClusterRoleBinding', children)).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: children },
      subjects: [{ kind: 'ServiceAccount', name: `${release}-applyset-controller`, namespace: releaseNamespace }],
    });
    const { args } = controllerContainer(objects).container;
    expect(args).toContain('--apply-as-controller');
    expect(args).not.toContain('--default-service-account');
    expect(args).not.toContain('--require-secret-source-hosts');
    // No default account to impersonate: only the names listed.
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(role.filter((rule) => rule.verbs.includes('impersonate'))).toEqual([]);
  }, HELM_TIMEOUT_MS);

  it('let spec.serviceAccountName use the names in tenancy.serviceAccountNames, besides the default account', async () => {
    const impersonated = async (values: Record<string, string>) =>
      rules(
        find(await render(values, ['--set-json', 'tenancy.serviceAccountNames=["ops","applyset-deployer"]']), 'ClusterRole', `${release}-applyset-controller`),
      ).filter((rule) => rule.verbs.includes('impersonate'));
    expect(await impersonated({})).toEqual([
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['applyset-deployer', 'ops'] },
    ]);
    expect(await impersonated({ 'tenancy.defaultServiceAccount': 'deployer' })).toEqual([
      expect.objectContaining({ resourceNames: ['deployer', 'ops', 'applyset-deployer'] }),
    ]);
    expect(await impersonated({ 'tenancy.applyAsController': 'true' })).toEqual([
      expect.objectContaining({ resourceNames: ['ops', 'applyset-deployer'] }),
    ]);
  }, HELM_TIMEOUT_MS);

  it('narrow the children rights under tenancy.applyAsController, or leave them to a role of your own', async () => {
    const narrowed = await render({ 'tenancy.applyAsController': 'true' }, [
      '--set-json',
      'rbac.childRules=[{"apiGroups":["apps"],"resources":["deployments"],"verbs":["get","patch"]}]',
    ]);
    expect(rules(find(narrowed, 'ClusterRole', `${release}-applyset-controller-children`))).toEqual([
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'patch'] },
    ]);
    const none = await render({ 'tenancy.applyAsController': 'true' }, ['--set-json', 'rbac.childRules=[]']);
    expect(none.filter((o) => o.metadata.name.endsWith('-children'))).toEqual([]);
  }, HELM_TIMEOUT_MS);

  it('set the Git bounds, each to its flag, and keep the cache bound under the emptyDir', async () => {
    const objects = await render({
      'gitLimits.maxObjectBytes': '4Mi',
      'gitLimits.maxFetchBytes': '32Mi',
      'gitLimits.maxFetchObjects': '1000',
      'gitCache.maxBytes': '512Mi',
      'gitCache.maxRepositoryBytes': '64Mi',
    });
    const args = controllerContainer(objects).container.args;
    const valueOf = (flag: string) => args[args.indexOf(flag) + 1];
    expect(
      ['--git-max-object-bytes', '--git-max-fetch-bytes', '--git-max-fetch-objects'].map(valueOf),
    ).toEqual(['4Mi', '32Mi', '1000']);
    expect(['--git-cache-max-bytes', '--git-cache-max-repository-bytes'].map(valueOf)).toEqual([
      '512Mi',
      '64Mi',
    ]);
  }, HELM_TIMEOUT_MS);

  it('restrict the source hosts, and keep requiring Secrets to name theirs under tenancy.applyAsController', async () => {
    const defaults = controllerContainer(await render()).container.args;
    expect(defaults).not.toContain('--allowed-source-hosts');
    // The controller's default: no flag needed.
    expect(defaults).not.toContain('--require-secret-source-hosts');
    const restricted = controllerContainer(
      await render({ 'tenancy.applyAsController': 'true' }, [
        '--set-json',
        'gitSources.allowedHosts=["git.example.com","git.other.org:8443"]',
        '--set',
        'gitSources.requireSecretSourceHosts=true',
      ]),
    ).container.args;
    expect(restricted).toEqual(
      expect.arrayContaining([
        '--allowed-source-hosts',
        'git.example.com,git.other.org:8443',
        '--require-secret-source-hosts',
      ]),
    );
    expect(restricted[restricted.indexOf('--allowed-source-hosts') + 1]).toBe('git.example.com,git.other.org:8443');
  }, HELM_TIMEOUT_MS);

  it('pass --require-secret-source-hosts only where it is not already the default', async () => {
    const objects = await render({ 'gitSources.requireSecretSourceHosts': 'true' });
    expect(controllerContainer(objects).container.args).not.toContain('--require-secret-source-hosts');
  }, HELM_TIMEOUT_MS);

  it('apply ApplySets without serviceAccountName as a default ServiceAccount of their own namespace', async () => {
    expect(controllerContainer(await render()).container.args).not.toContain('--default-service-account');
    const args = controllerContainer(await render({ 'tenancy.defaultServiceAccount': 'deployer' })).container.args;
    const at = args.indexOf('--default-service-account');
    expect(args.slice(at, at + 2)).toEqual(['--default-service-account', 'deployer']);
    await expect(
      render({ 'tenancy.defaultServiceAccount': 'deployer', 'tenancy.applyAsController': 'true' }),
    ).rejects.toThrow(/tenancy.defaultServiceAccount names the account ApplySets are applied as/);
  }, HELM_TIMEOUT_MS);

  it('refuse Secrets of other namespaces unless the values list the namespace and lift the lockdown', async () => {
    // The controller's default: no flag needed.
    expect(controllerContainer(await render()).container.args).not.toContain('--allow-cross-namespace-refs');
    await expect(render({}, ['--set-json', 'tenancy.allowSecretRefsFrom=["git-credentials"]'])).rejects.toThrow(
      /tenancy.allowSecretRefsFrom needs tenancy.noCrossNamespaceRefs=false/,
    );
    const args = controllerContainer(
      await render({ 'tenancy.noCrossNamespaceRefs': 'false' }, [
        '--set-json',
        'tenancy.allowSecretRefsFrom=["git-credentials","shared"]',
      ]),
    ).container.args;
    expect(args).toContain('--allow-cross-namespace-refs');
    const at = args.indexOf('--allow-secret-refs-from');
    expect(args.slice(at, at + 2)).toEqual(['--allow-secret-refs-from', 'git-credentials,shared']);
  }, HELM_TIMEOUT_MS);

  it('serve push webhooks on a port and Service of their own, with the receivers in a Secret', async () => {
    const defaults = await render();
    expect(controllerContainer(defaults).container.args).not.toContain('--webhook-addr');
    expect(defaults.filter((o) => o.metadata.name.endsWith('-webhook'))).toEqual([]);
    await expect(render({ 'webhook.enabled': 'true' })).rejects.toThrow(/webhook.secretName is required/);
    const objects = await render({ 'webhook.enabled': 'true', 'webhook.secretName': 'hooks' });
    const { container } = controllerContainer(objects);
    const at = container.args.indexOf('--webhook-addr');
    expect(container.args.slice(at, at + 4)).toEqual([
      '--webhook-addr',
      ':9292',
      '--webhook-secret',
      `${releaseNamespace}/hooks`,
    ]);
    expect(container.ports).toEqual(
      expect.arrayContaining([{ name: 'webhook', containerPort: 9292, protocol: 'TCP' }]),
    );
    const service = find(objects, 'Service', `${release}-applyset-controller-webhook`) as unknown as {
      spec: { ports: { name: string; port: number; targetPort: string }[] };
    };
    expect(service.spec.ports).toEqual([{ name: 'webhook', port: 80, targetPort: 'webhook', protocol: 'TCP' }]);
  }, HELM_TIMEOUT_MS);

  it('read no Secret as the controller when ApplySets are applied as accounts, but the webhook receivers by name', async () => {
    const role = (objects: K8sObject[]) => rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    // Applying as the controller (the opt-out): it reads the Git credentials Secrets itself.
    expect(allows(role(await render({ 'tenancy.applyAsController': 'true' })), '', 'secrets', 'get')).toBe(true);
    // Applying as accounts (the default, whatever the account is named): each account reads its own
    // Secret, the controller none.
    expect(allows(role(await render()), '', 'secrets', 'get')).toBe(false);
    const lockedDown = await render({ 'tenancy.defaultServiceAccount': 'deployer' });
    expect(allows(role(lockedDown), '', 'secrets', 'get')).toBe(false);
    expect(lockedDown.filter((o) => o.kind === 'Role' && rules(o).some((r) => r.resources?.includes('secrets')))).toEqual(
      [],
    );
    const hooks = await render({
      'tenancy.defaultServiceAccount': 'deployer',
      'webhook.enabled': 'true',
      'webhook.secretName': 'hooks',
    });
    expect(allows(role(hooks), '', 'secrets', 'get')).toBe(false);
    const hookRole = find(hooks, 'Role', `${release}-applyset-controller-webhook-secret`);
    expect(hookRole.metadata.namespace).toBe(releaseNamespace);
    expect(rules(hookRole)).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['hooks'], verbs: ['get'] },
    ]);
    expect(find(hooks, 'RoleBinding', `${release}-applyset-controller-webhook-secret`)).toMatchObject({
      roleRef: { kind: 'Role', name: `${release}-applyset-controller-webhook-secret` },
      subjects: [{ kind: 'ServiceAccount', name: `${release}-applyset-controller`, namespace: releaseNamespace }],
    });
  }, HELM_TIMEOUT_MS);

  it("refuse ApplySets in an ApplySet's manifests unless nesting is granted", async () => {
    expect(controllerContainer(await render()).container.args).not.toContain('--allow-nested-applysets');
    const args = controllerContainer(await render({ 'tenancy.allowNestedApplySets': 'true' })).container.args;
    expect(args).toContain('--allow-nested-applysets');
  }, HELM_TIMEOUT_MS);

  it('make a shard: a label selector on the ApplySets and a Lease of the release', async () => {
    const objects = await render({ watchLabelSelector: 'sharding.applyset.dev/key in (shard1)' });
    expect(controllerContainer(objects).container.args).toEqual(
      expect.arrayContaining([
        '--lease-name',
        `${release}-applyset-controller-leader`,
        '--watch-label-selector',
        'sharding.applyset.dev/key in (shard1)',
      ]),
    );
    const named = await render({ 'leaderElection.leaseName': 'shard-one' });
    expect(controllerContainer(named).container.args).toEqual(expect.arrayContaining(['--lease-name', 'shard-one']));
    expect(controllerContainer(named).container.args).not.toContain('--watch-label-selector');
  }, HELM_TIMEOUT_MS);

  it('turn leader election off', async () => {
    const objects = await render({ 'leaderElection.enabled': 'false' });
    expect(controllerContainer(objects).container.args).not.toContain('--leader-elect');
    expect(objects.filter((o) => o.metadata.name.endsWith('-leader-election'))).toEqual([]);
  }, HELM_TIMEOUT_MS);

  it('refuse an existing ServiceAccount without a name', async () => {
    await expect(render({ 'serviceAccount.create': 'false' })).rejects.toThrow(/serviceAccount.name is required/);
  }, HELM_TIMEOUT_MS);
});
