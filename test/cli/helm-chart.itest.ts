import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { applyCommand } from '../../src/cli/apply-command.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { cliHome } from '../harness/cli-home.js';
import { helmBinary } from '../harness/helm-binary.js';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #36: `applyset apply --helm-chart DIR --values F --set k=v` renders a chart on disk as the
// controller renders an ApplySet's, and applies it with kubectl's merge: the objects are those of
// `helm template … | kubectl apply -f -`; `diff --helm-chart` shows what a values change would do.

const execFileAsync = promisify(execFile);

const chart = {
  'web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n',
  'web/values.yaml': 'replicas: 1\ngreeting: hello\nextra: {enabled: true}\nport: 80\n',
  'web/templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {chart: "{{ .Chart.Name }}-{{ .Chart.Version }}"}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
        - name: web
          image: registry.example/web:v1
          ports: [{containerPort: {{ .Values.port }}}]
`,
  'web/templates/service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: {{ .Values.port }}, protocol: TCP}]
`,
  'web/templates/settings.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
  namespace: {{ .Release.Namespace | quote }}
  replicas: {{ .Values.replicas | quote }}
`,
  'web/templates/extra.yaml': `{{- if .Values.extra.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data: {state: "on"}
{{- end }}
`,
  'env/prod.yaml': 'replicas: 3\ngreeting: from-file\n',
};

/** What of an object both appliers must agree on: not what the server assigns. */
function comparable(item: Record<string, unknown>): unknown {
  const metadata = item['metadata'] as Record<string, unknown>;
  const spec = { ...(item['spec'] as Record<string, unknown> | undefined) };
  delete spec['clusterIP'];
  delete spec['clusterIPs'];
  const annotations = { ...(metadata['annotations'] as Record<string, string> | undefined) };
  const lastApplied = JSON.parse(annotations['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}');
  delete lastApplied.metadata?.namespace;
  return {
    kind: item['kind'],
    name: metadata['name'],
    labels: Object.fromEntries(
      Object.entries((metadata['labels'] as Record<string, string> | undefined) ?? {}).filter(
        ([key]) => key !== 'applyset.kubernetes.io/part-of',
      ),
    ),
    data: item['data'],
    spec: item['kind'] === 'Deployment' ? (spec['template'] as object) : spec,
    lastApplied,
  };
}

async function objectsIn(namespace: string): Promise<unknown[]> {
  const { stdout } = await kubectl(['get', 'deployments,services,configmaps', '-n', namespace, '-o', 'json']);
  const items = (JSON.parse(stdout) as { items: Record<string, unknown>[] }).items;
  return (
    items
      // The chart's objects: not the apply-config ConfigMap that records our set.
      .filter((item) => {
        const metadata = item['metadata'] as { name: string; labels?: Record<string, string> };
        return (
          metadata.name.startsWith('web') &&
          metadata.labels?.['kubectl.kubernetes.io/apply-cfg'] === undefined
        );
      })
      .map(comparable)
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
  );
}

describe('applyset apply --helm-chart', () => {
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    env = { KUBECONFIG: adminKubeconfigPath(), HOME: cliHome(), APPLYSET_HELM_BINARY: await helmBinary() };
    dir = await writeSetDirectory(chart);
  });

  const flags = ['--helm-chart', 'web', '--values', 'env/prod.yaml', '--set', 'greeting=from-set,port=8080'];

  it('applies what helm template | kubectl apply applies, object for object', async () => {
    const ours = await freshNamespace('helm-cli');
    const applied = await runCli(applyCommand, [...flags, '--applyset', 'web', '-n', ours], {
      env,
      cwd: dir,
    });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(ExitCode.ok);
    expect(
      applied.stdout
        .split('\n')
        .filter((line) => line.endsWith(' created'))
        .sort(),
    ).toEqual([
      'configmap/web-extra created',
      'configmap/web-settings created',
      'deployment.apps/web created',
      'service/web created',
    ]);

    const theirs = await freshNamespace('helm-kubectl');
    const rendered = await execFileAsync(
      await helmBinary(),
      [
        'template',
        'web',
        'web',
        '--namespace',
        theirs,
        '--values',
        'env/prod.yaml',
        '--set',
        'greeting=from-set,port=8080',
      ],
      { cwd: dir },
    );
    const kubectlRun = execFileAsync('kubectl', [
      '--kubeconfig',
      adminKubeconfigPath(),
      'apply',
      '-n',
      theirs,
      '-f',
      '-',
    ]);
    kubectlRun.child.stdin?.end(rendered.stdout);
    await kubectlRun;

    const [a, b] = [await objectsIn(ours), await objectsIn(theirs)];
    expect(a).toHaveLength(4);
    // The release's namespace is where the objects went: each render saw its own.
    expect(JSON.stringify(a)).toContain(`"namespace":"${ours}"`);
    expect(JSON.stringify(a).split(ours).join('NS')).toBe(JSON.stringify(b).split(theirs).join('NS'));
  });

  it('previews a values change with diff, then prunes what a value turns off', async () => {
    const ns = await freshNamespace('helm-cli-diff');
    const apply = (extra: string[]) =>
      runCli(applyCommand, [...flags, ...extra, '--applyset', 'web', '-n', ns], { env, cwd: dir });
    expect((await apply([])).code).toBe(ExitCode.ok);

    const bump = ['--set', 'replicas=5', '--set', 'extra.enabled=false'];
    const diff = await runCli(diffCommand, [...flags, ...bump, '--applyset', 'web', '-n', ns], {
      env,
      cwd: dir,
    });
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain(`~ deployment.apps/web -n ${ns}`);
    expect(diff.stdout).toContain(`- configmap/web-extra -n ${ns} (pruned by apply --prune)`);

    const pruned = await apply([...bump, '--prune']);
    expect(pruned.code).toBe(ExitCode.ok);
    expect(pruned.stdout).toContain('configmap/web-extra pruned');
    expect(pruned.stdout).toContain('deployment.apps/web configured');
    const { stdout } = await kubectl([
      'get',
      'configmap',
      'web-settings',
      '-n',
      ns,
      '-o',
      'jsonpath={.data.replicas}',
    ]);
    expect(stdout).toBe('5');
  });

  it('refuses a directory without Chart.yaml, a missing values file and a stray --set, writing nothing', async () => {
    const ns = await freshNamespace('helm-cli-bad');
    const run = (argv: string[]) =>
      runCli(applyCommand, [...argv, '--applyset', 'web', '-n', ns], { env, cwd: dir });
    const noChart = await run(['--helm-chart', 'env']);
    expect(noChart.code).toBe(ExitCode.badInput);
    expect(noChart.stderr).toContain("--helm-chart env: holds no Chart.yaml; name the chart's directory");
    const noValues = await run(['--helm-chart', 'web', '--values', 'env/missing.yaml']);
    expect(noValues.stderr).toContain('--values env/missing.yaml: no such file');
    const stray = await run(['-f', path.join(dir, 'env'), '--set', 'a=b']);
    expect(stray.stderr).toContain('--set is for --helm-chart');
    const broken = await run(['--helm-chart', 'web', '--set', 'replicas=[']);
    expect(broken.code).toBe(ExitCode.badInput);
    expect(broken.stderr).toMatch(/^applyset apply: helm template web failed: /);
    const { stdout } = await kubectl(['get', 'configmaps,deployments', '-n', ns, '-o', 'name']);
    expect(stdout).not.toContain('web');
  });

  it("renders with the target cluster's version and API versions, as helm install would see them", async () => {
    const ns = await freshNamespace('helm-cli-capabilities');
    // A kind only this cluster serves: a CRD of the test's own.
    const plural = `probes${ns.slice(-8).replace(/[^a-z0-9]/g, '')}`;
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${plural}.example.com}
spec:
  group: example.com
  names: {kind: Probe, plural: ${plural}, singular: ${plural.slice(0, -1)}, listKind: ProbeList}
  scope: Namespaced
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`;
    const crdDir = await writeSetDirectory({ 'crd.yaml': crd });
    await kubectl(['apply', '-f', path.join(crdDir, 'crd.yaml')]);
    await kubectl(['wait', '--for=condition=Established', `crd/${plural}.example.com`, '--timeout=60s']);
    const probe = await writeSetDirectory({
      'probe/Chart.yaml': 'apiVersion: v2\nname: probe\nversion: 1.0.0\n',
      'probe/templates/capabilities.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: capabilities}
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  probes: {{ .Capabilities.APIVersions.Has "example.com/v1/Probe" | quote }}
`,
    });
    const run = await runCli(applyCommand, ['--helm-chart', 'probe', '--applyset', 'probe', '-n', ns], {
      env,
      cwd: probe,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(ExitCode.ok);
    const { stdout } = await kubectl(['get', 'configmap', 'capabilities', '-n', ns, '-o', 'json']);
    const data = (JSON.parse(stdout) as { data: Record<string, string> }).data;
    const server = JSON.parse((await kubectl(['version', '-o', 'json'])).stdout) as {
      serverVersion: { gitVersion: string };
    };
    // helm's offline default is another version, and knows nothing of this cluster's CRDs.
    expect(data['kubeVersion']).toBe(server.serverVersion.gitVersion);
    expect(data['probes']).toBe('true');
    await kubectl(['delete', 'crd', `${plural}.example.com`, '--wait=false']);
  });
});
