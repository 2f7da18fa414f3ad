import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { kubectl } from '../apply/apply-test-kit.js';
import { cliHome } from '../harness/cli-home.js';
import { helmBinary } from '../harness/helm-binary.js';
import { startHelmRepository, type HelmRepository } from '../harness/helm-repository.js';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { runShippedCli } from '../harness/shipped-cli.js';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import { freshNamespace } from './cli-test-kit.js';

// Issue #36: `applyset apply --helm-chart` of a chart that is not on disk, as users run the CLI (the
// shipped bin/applyset.js, trusting the repository's CA through NODE_EXTRA_CA_CERTS): a chart of a
// Helm repository served over HTTPS (`helm package` + `helm repo index`), named with --repo or as
// REPO/NAME of the repositories.yaml the real `helm repo add` wrote, and a chart `helm push` stored in
// a real OCI registry; --version picks the version as spec.helm.version does.

const execFileAsync = promisify(execFile);

const chart = (version: string) => ({
  'Chart.yaml': `apiVersion: v2\nname: web\nversion: ${version}\n`,
  'values.yaml': 'greeting: hello\n',
  'templates/main.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-main\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  version: {{ .Chart.Version | quote }}\n',
});

describe('applyset apply --helm-chart of a repository or a registry', () => {
  let repository: HelmRepository;
  let registry: OciRegistry;
  let helmHome: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    repository = await startHelmRepository();
    await repository.addChart('web', chart('1.0.0'));
    await repository.addChart('web', chart('1.1.0'));
    registry = await startOciRegistry();
    const tgz = await repository.packageChart('web', chart('2.3.0'));
    await repository.helm(['push', tgz, `oci://${registry.host}/charts`, '--plain-http']);
    helmHome = await mkdtemp(path.join(tmpdir(), 'applyset-cli-helm-home-'));
    env = {
      PATH: process.env['PATH'] ?? '',
      HOME: cliHome(),
      KUBECONFIG: adminKubeconfigPath(),
      APPLYSET_HELM_BINARY: await helmBinary(),
      NODE_EXTRA_CA_CERTS: repository.caFile,
      HELM_REPOSITORY_CONFIG: path.join(helmHome, 'repositories.yaml'),
    };
    // What a user did once: `helm repo add` (the real helm, which checks the repository and its CA).
    await execFileAsync(await helmBinary(), [
      'repo',
      'add',
      'team',
      repository.url,
      '--ca-file',
      repository.caFile,
      '--repository-config',
      env['HELM_REPOSITORY_CONFIG'] ?? '',
      '--repository-cache',
      path.join(helmHome, 'cache'),
    ]);
  }, 120_000);

  afterAll(async () => {
    await repository?.close();
    await registry?.stop();
    await rm(helmHome, { recursive: true, force: true });
  });

  const applyset = (args: readonly string[]) => runShippedCli(args, env);

  const versionIn = async (namespace: string) =>
    (await kubectl(['get', 'configmap', 'web-main', '-n', namespace, '-o', 'jsonpath={.data.version}']))
      .stdout;

  it('applies a chart of --repo at the version --version picks, then previews and applies a bump', async () => {
    const ns = await freshNamespace('helm-repo-cli');
    const pinned = await applyset([
      'apply',
      '--helm-chart',
      'web',
      '--repo',
      repository.url,
      '--version',
      '~1.0.0',
      '--applyset',
      'web',
      '-n',
      ns,
    ]);
    expect(pinned.stderr).toMatch(
      /^fetched https:\/\/127\.0\.0\.1:\d+\/charts chart web 1\.0\.0 \(sha256:[a-f0-9]{64}\)\n$/,
    );
    expect(pinned.code).toBe(0);
    expect(await versionIn(ns)).toBe('1.0.0');

    // What bumping to the newest version would change.
    const diff = await applyset([
      'diff',
      '--helm-chart',
      'web',
      '--repo',
      repository.url,
      '--applyset',
      'web',
      '-n',
      ns,
    ]);
    expect(diff.code).toBe(1);
    expect(diff.stderr).toContain('chart web 1.1.0');
    expect(diff.stdout).toContain(`~ configmap/web-main -n ${ns}`);
    expect(diff.stdout).toContain('data.version: "1.0.0" → "1.1.0"');

    const bumped = await applyset([
      'apply',
      '--helm-chart',
      'web',
      '--repo',
      repository.url,
      '--applyset',
      'web',
      '-n',
      ns,
    ]);
    expect(bumped.code).toBe(0);
    expect(bumped.stdout).toContain('configmap/web-main configured');
    expect(await versionIn(ns)).toBe('1.1.0');
  });

  it('applies REPO/NAME of the repository helm repo add recorded', async () => {
    const ns = await freshNamespace('helm-alias-cli');
    const run = await applyset([
      'apply',
      '--helm-chart',
      'team/web',
      '--version',
      '1.0.x',
      '--applyset',
      'web',
      '-n',
      ns,
    ]);
    expect(run.stderr).toContain('fetched team chart web 1.0.0');
    expect(run.code).toBe(0);
    expect(await versionIn(ns)).toBe('1.0.0');

    const unknown = await applyset(['apply', '--helm-chart', 'other/web', '--applyset', 'web', '-n', ns]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('names no repository other');
  });

  it('applies an oci:// chart helm pushed, its tag chosen by --version', async () => {
    const ns = await freshNamespace('helm-oci-cli');
    const run = await applyset([
      'apply',
      '--helm-chart',
      `oci://${registry.host}/charts/web`,
      '--plain-http',
      '--version',
      '2.x',
      '--applyset',
      'web',
      '-n',
      ns,
    ]);
    expect(run.stderr).toMatch(
      /^fetched oci:\/\/127\.0\.0\.1:\d+\/charts\/web 2\.3\.0 \(sha256:[a-f0-9]{64}\)\n$/,
    );
    expect(run.code).toBe(0);
    expect(await versionIn(ns)).toBe('2.3.0');
  });

  it('says in one line which chart could not be had, and writes nothing', async () => {
    const ns = await freshNamespace('helm-missing-cli');
    const missing = await applyset([
      'apply',
      '--helm-chart',
      'web',
      '--repo',
      repository.url,
      '--version',
      '9.x',
      '--applyset',
      'web',
      '-n',
      ns,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain(`--helm-chart ${repository.url} chart web:`);
    expect(missing.stderr).toContain('9.x');
    expect(missing.stderr).toContain('nothing was written');
    const { stdout } = await kubectl(['get', 'configmaps', '-n', ns, '-o', 'name']);
    expect(stdout).not.toContain('web-main');
  });
});
