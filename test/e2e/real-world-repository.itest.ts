import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startGitServer, type FileTree, type GitTestServer } from '../harness/git-server.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  createApplySet,
  getApplySet,
  installCrd,
  kubectl,
  patchApplySet,
  repoRoot,
  startController,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';
import { grantClusterRules } from './default-deployer.js';

// A repository shaped like kube-prometheus, applied by the controller as a user would: names with ':'
// (system:…), a binding chain across namespaces, a CRD committed together with its custom resource, a
// setup/ subdirectory. Then a re-apply that must write nothing, a change with a prune, and kubectl apply
// of the same files agreeing that nothing is left to do.

const execFileAsync = promisify(execFile);
const WRITE = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
/** What the kube-prometheus-like repository holds, its ServiceMonitors being of `monitoringGroup`. */
const platformRules = (monitoringGroup: string) => [
  { apiGroups: [''], resources: ['namespaces', 'serviceaccounts', 'configmaps', 'services'], verbs: WRITE },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: WRITE },
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: WRITE },
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: WRITE },
  { apiGroups: [monitoringGroup], resources: ['servicemonitors'], verbs: WRITE },
  {
    apiGroups: ['rbac.authorization.k8s.io'],
    resources: ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'],
    verbs: [...WRITE, 'bind', 'escalate'],
  },
];
const fixture = path.join(repoRoot, 'test/fixtures/real-world/kube-prometheus-like');

async function readFixture(dir: string, prefix = ''): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) Object.assign(files, await readFixture(path.join(dir, entry.name), relative));
    else if (entry.name.endsWith('.yaml'))
      files[relative] = await readFile(path.join(dir, entry.name), 'utf8');
  }
  return files;
}

/** What `kubectl get -o json` shows of each object the set should hold: kind/name → resourceVersion. */
async function resourceVersions(refs: readonly string[]): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const ref of refs) {
    const [namespace, resource] = ref.split(' ') as [string, string];
    const args =
      namespace === '-' ? ['get', resource, '-o', 'json'] : ['-n', namespace, 'get', resource, '-o', 'json'];
    const object = JSON.parse(await kubectl(args)) as { metadata: { resourceVersion: string } };
    result[ref] = object.metadata.resourceVersion;
  }
  return result;
}

async function exists(namespace: string, resource: string): Promise<boolean> {
  const args =
    namespace === '-'
      ? ['get', resource, '--ignore-not-found', '-o', 'name']
      : ['-n', namespace, 'get', resource, '--ignore-not-found', '-o', 'name'];
  return (await kubectl(args)).trim() !== '';
}

describe('a kube-prometheus-shaped repository', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-realworld');
  const suffix = namespace.replace(/^e2e-realworld-?/, '').slice(-8) || 'x';
  const monitoring = `${namespace}-mon`;
  const group = `monitoring.${suffix}.example.com`;
  const render = (text: string) =>
    text.replaceAll('__NS__', monitoring).replaceAll('__GROUP__', group).replaceAll('__SUFFIX__', suffix);
  let files: Record<string, string>;
  let git: GitTestServer;
  let revokeClusterRules: (() => Promise<void>) | undefined;
  let work: string;

  // Every object of the set, as "<namespace or -> <resource>/<name>" for kubectl.
  const objects = () => [
    `- namespace/${monitoring}`,
    `- customresourcedefinition.apiextensions.k8s.io/servicemonitors.${group}`,
    `${monitoring} servicemonitors.${group}/prometheus-adapter`,
    `- clusterrole.rbac.authorization.k8s.io/prometheus-adapter-${suffix}`,
    `- clusterrole.rbac.authorization.k8s.io/system:aggregated-metrics-reader-${suffix}`,
    `- clusterrolebinding.rbac.authorization.k8s.io/prometheus-adapter-${suffix}`,
    `- clusterrolebinding.rbac.authorization.k8s.io/resource-metrics:system:auth-delegator-${suffix}`,
    `kube-system rolebinding.rbac.authorization.k8s.io/resource-metrics-auth-reader-${suffix}`,
    `${monitoring} serviceaccount/prometheus-adapter`,
    `${monitoring} configmap/adapter-config`,
    `${monitoring} service/prometheus-adapter`,
    `${monitoring} networkpolicy.networking.k8s.io/prometheus-adapter`,
    `${monitoring} deployment.apps/prometheus-adapter`,
  ];

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    files = Object.fromEntries(
      Object.entries(await readFixture(fixture)).map(([name, text]) => [
        `kube-prometheus/${name}`,
        render(text),
      ]),
    );
    git = await startGitServer({ files: files as FileTree });
    work = await mkdtemp(path.join(tmpdir(), 'applyset-realworld-'));
    // A platform component: CRDs, cluster roles and bindings, a binding in kube-system. Its deployer
    // must be granted exactly that on the cluster (bind and escalate included, to grant the adapter's
    // roles): an operator's decision, made here explicitly.
    revokeClusterRules = await grantClusterRules(namespace, platformRules(group));
    await startController({ namespace });
  });

  afterAll(async () => {
    // Deleting the ApplySet prunes everything it holds, the cluster-scoped objects included.
    await kubectl([
      '-n',
      namespace,
      'delete',
      'applysets.applyset.dev',
      'monitoring',
      '--ignore-not-found',
      '--wait=true',
      '--timeout=60s',
    ]).catch(() => undefined);
    await stopAllControllers();
    await revokeClusterRules?.();
    await git?.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('applies everything on the first reconcile, CRD and custom resource together', async () => {
    const sha = await git.revParse('main');
    await createApplySet(c, namespace, 'monitoring', {
      url: git.url,
      path: 'kube-prometheus',
      interval: '1h',
    });
    const view = await waitForAppliedCommit(c, namespace, 'monitoring', sha, 90_000);
    expect(view.status?.summary).toMatchObject({ applied: objects().length, failed: 0 });
    const uid = (await getApplySet(c, namespace, 'monitoring')) as unknown as { metadata: { uid: string } };
    for (const ref of objects()) {
      const [ns, resource] = ref.split(' ') as [string, string];
      const args = ns === '-' ? ['get', resource, '-o', 'json'] : ['-n', ns, 'get', resource, '-o', 'json'];
      const live = JSON.parse(await kubectl(args)) as { metadata: { annotations?: Record<string, string> } };
      expect({ ref, owner: live.metadata.annotations?.['kubectl.kubernetes.io/apply-owner'] }).toEqual({
        ref,
        owner: uid.metadata.uid,
      });
    }
  });

  it('writes nothing when reconciled again at the same revision', async () => {
    const before = await resourceVersions(objects());
    const viewBefore = await getApplySet(c, namespace, 'monitoring');
    const parentBefore = viewBefore?.metadata.annotations;
    const requested = `again-${Date.now()}`;
    await patchApplySet(namespace, 'monitoring', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': requested } },
    });
    const view = await waitFor(
      'the requested reconcile to be handled',
      async () => {
        const current = await getApplySet(c, namespace, 'monitoring');
        return current?.status?.lastHandledReconcileAt === requested ? current : undefined;
      },
      60_000,
    );
    // A run that changed nothing leaves the summary of the last one that did (issue #39: no write).
    expect(view.status?.summary).toEqual(viewBefore?.status?.summary);
    expect(view.status?.summary).toMatchObject({ failed: 0 });
    expect(await resourceVersions(objects())).toEqual(before);
    const inventoryKey = 'kubectl.kubernetes.io/last-applied-objects';
    expect(view.metadata.annotations?.[inventoryKey]).toBe(parentBefore?.[inventoryKey]);
    // Names with ':' are recorded whole and read back whole.
    expect(view.metadata.annotations?.[inventoryKey]).toContain(
      `:rbac.authorization.k8s.io:ClusterRoleBinding:resource-metrics:system:auth-delegator-${suffix}`,
    );
  });

  it('applies a change and prunes what left Git, names with ":" included', async () => {
    const configMap = 'kube-prometheus/prometheusAdapter-configMap.yaml';
    await git.writeFiles({
      [configMap]: (files[configMap] as string).replace('"window": "5m"', '"window": "10m"'),
    });
    const sha = await git.deleteFiles([
      'kube-prometheus/prometheusAdapter-clusterRoleAggregatedMetricsReader.yaml',
      'kube-prometheus/prometheusAdapter-serviceMonitor.yaml',
    ]);
    // The interval is an hour: ask for the new commit as a user (or a push webhook) would.
    await patchApplySet(namespace, 'monitoring', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': `change-${Date.now()}` } },
    });
    const view = await waitForAppliedCommit(c, namespace, 'monitoring', sha, 90_000);
    expect(view.status?.summary).toMatchObject({ applied: 1, pruned: 2, failed: 0 });
    expect(
      await exists('-', `clusterrole.rbac.authorization.k8s.io/system:aggregated-metrics-reader-${suffix}`),
    ).toBe(false);
    expect(await exists(monitoring, `servicemonitors.${group}/prometheus-adapter`)).toBe(false);
    // The CRD stays: it is still in Git.
    expect(await exists('-', `customresourcedefinition.apiextensions.k8s.io/servicemonitors.${group}`)).toBe(
      true,
    );
    const config = JSON.parse(
      await kubectl(['-n', monitoring, 'get', 'configmap', 'adapter-config', '-o', 'json']),
    ) as {
      data: Record<string, string>;
    };
    expect(config.data['config.yaml']).toContain('"window": "10m"');
  });

  it('leaves kubectl apply of the same files nothing to do', async () => {
    const current = await git.revParse('main');
    expect(current).toMatch(/^[0-9a-f]{40}$/);
    const dir = path.join(work, 'kube-prometheus');
    const remaining = { ...files };
    delete remaining['kube-prometheus/prometheusAdapter-clusterRoleAggregatedMetricsReader.yaml'];
    delete remaining['kube-prometheus/prometheusAdapter-serviceMonitor.yaml'];
    const configMap = 'kube-prometheus/prometheusAdapter-configMap.yaml';
    remaining[configMap] = (files[configMap] as string).replace('"window": "5m"', '"window": "10m"');
    for (const [name, text] of Object.entries(remaining)) {
      const target = path.join(work, name);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, text);
    }
    const remainingObjects = objects().filter(
      (ref) => !ref.includes('system:aggregated-metrics-reader') && !ref.includes('servicemonitors.'),
    );
    const before = await resourceVersions(remainingObjects);
    const { stdout } = await execFileAsync('kubectl', [
      '--kubeconfig',
      adminKubeconfigPath(),
      'apply',
      '-R',
      '-f',
      dir,
    ]);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(objects().length - 2);
    // kubectl changes nothing. It words one object `configured`: the Deployment's
    // `securityContext: {}`, which the server drops, is in kubectl's patch on every apply, from a
    // fresh `kubectl apply` as well; the server leaves the object as it is.
    expect(await resourceVersions(remainingObjects)).toEqual(before);
    for (const line of lines) {
      if (line.startsWith('deployment.apps/prometheus-adapter '))
        expect(line).toMatch(/ (unchanged|configured)$/);
      else expect(line).toMatch(/ unchanged$/);
    }
  });
});
