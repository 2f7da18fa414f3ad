import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import type { FileTree, GitTestServer } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { applySetBody, cluster, GROUP, PLURAL, VERSION, waitForAppliedCommit } from './e2e-kit.js';

// The preview of a chart bump (issue #36): `applyset diff --applyset-object` renders the chart of a
// checkout as the controller renders it (--helm-binary; its valuesFrom and the cluster's capabilities),
// and shows what the bump would change.

const chart = (version: string): FileTree => ({
  'charts/web/Chart.yaml': `apiVersion: v2\nname: web\nversion: ${version}\n`,
  'charts/web/values.yaml': 'greeting: hello\n',
  'charts/web/templates/main.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-main\n  labels:\n    chart: {{ .Chart.Name }}-{{ .Chart.Version }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n' +
    // The cluster's capabilities: the preview renders with them as the controller does.
    '  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n  applySets: {{ .Capabilities.APIVersions.Has "applyset.dev/v1alpha1/ApplySet" | quote }}\n',
});

describe('applyset diff --applyset-object on a Helm chart', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-preview-helm');
  let git: GitTestServer;
  let binary: string;
  let checkout: string;

  const writeCheckout = async (tree: FileTree): Promise<string> => {
    await rm(checkout, { recursive: true, force: true });
    for (const [path, text] of Object.entries(tree)) {
      await mkdir(dirname(join(checkout, path)), { recursive: true });
      await writeFile(join(checkout, path), text);
    }
    return checkout;
  };
  const preview = (...args: string[]) =>
    runCli(diffCommand, ['--applyset-object', 'web', '-n', namespace, '--helm-binary', binary, ...args]);

  beforeAll(async () => {
    binary = await helmBinary();
    ({ git } = await startControllerWithRepository(c, namespace, chart('0.1.0'), {
      args: ['--helm-binary', binary],
    }));
    checkout = join(await mkdtemp(join(tmpdir(), 'applyset-preview-helm-')), 'checkout');
    // valuesFrom: the preview reads the ConfigMap as the ApplySet's account, as the controller does.
    await c.core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'web-values' }, data: { 'values.yaml': 'greeting: from-configmap\n' } },
    });
    const body = applySetBody(namespace, 'web', { url: git.url, path: 'charts/web', interval: '1h' });
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: {
        ...body,
        spec: {
          ...(body['spec'] as object),
          helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'web-values' }] },
        },
      },
    });
    await waitForAppliedCommit(c, namespace, 'web', await git.revParse('main'), 60_000);
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    if (checkout !== undefined) await rm(dirname(checkout), { recursive: true, force: true });
  });

  it('previews the applied chart as unchanged', async () => {
    const run = await preview('--local', await writeCheckout(chart('0.1.0')));
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(run.stdout).toMatch(/: 0 to create, 0 to configure, 0 to prune, 1 unchanged\n$/);
  });

  it('shows what a chart bump changes, in markdown', async () => {
    const run = await preview('--local', await writeCheckout(chart('0.2.0')), '-o', 'markdown');
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('1 to configure');
    expect(run.stdout).toContain('web-main');
    expect(run.stdout).toContain('web-0.2.0');
  });
});
