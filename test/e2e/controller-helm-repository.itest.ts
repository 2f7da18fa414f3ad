import { startHelmRepository, type HelmRepository } from '../harness/helm-repository.js';
import { helmBinary } from '../harness/helm-binary.js';
import { runShippedCli } from '../harness/shipped-cli.js';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  installCrd,
  patchApplySet,
  startController,
  stopAllControllers,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';

// Issue #36: charts of a repository. spec.helm.chart names a chart of the Helm repository
// spec.source.url (index.yaml over HTTPS, made by `helm repo index`, its certificate trusted through
// NODE_EXTRA_CA_CERTS) or of an OCI registry (`helm push`); the highest version in spec.helm.version is
// rendered and applied, a new version added to the index is a new revision, and a range nothing
// satisfies stalls the set naming the versions seen.

const chart = (version: string) => ({
  'Chart.yaml': `apiVersion: v2\nname: web\nversion: ${version}\n`,
  'values.yaml': 'greeting: hello\n',
  'templates/main.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-main\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  version: {{ .Chart.Version | quote }}\n',
});

describe('ApplySets on charts of a repository', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-helm-repo');
  let repository: HelmRepository;
  let registry: OciRegistry;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    repository = await startHelmRepository();
    await repository.addChart('web', chart('1.0.0'));
    registry = await startOciRegistry();
    await startController({
      namespace,
      env: { APPLYSET_HELM_BINARY: await helmBinary(), NODE_EXTRA_CA_CERTS: repository.caFile },
    });
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await registry?.stop();
    await repository?.close();
  });

  const revisionOf = (v: ApplySetView | undefined) => v?.status?.lastAppliedRevision ?? '';
  const data = (name: string) => configMapData(c, namespace, name);

  it('applies the highest version of the index, then the version added to it', async () => {
    await createApplySetWithSpec(
      c,
      namespace,
      'web',
      { url: 'unused' },
      {
        source: { url: repository.url },
        helm: { chart: 'web', values: { greeting: 'from-the-set' } },
        interval: '3s',
      },
    );
    const first = await waitForReady(
      c,
      namespace,
      'web',
      'True',
      (v) => revisionOf(v).startsWith('web@1.0.0@sha256:'),
      60_000,
    );
    expect(revisionOf(first)).toMatch(/^web@1\.0\.0@sha256:[a-f0-9]{64}$/);
    expect(await data('web-main')).toEqual({ greeting: 'from-the-set', version: '1.0.0' });

    await repository.addChart('web', chart('1.1.0'));
    await waitForReady(
      c,
      namespace,
      'web',
      'True',
      (v) => revisionOf(v).startsWith('web@1.1.0@sha256:'),
      60_000,
    );
    expect(await data('web-main')).toEqual({ greeting: 'from-the-set', version: '1.1.0' });
  });

  it('previews a chart version bump in markdown, then applies it', async () => {
    await createApplySetWithSpec(
      c,
      namespace,
      'pinned',
      { url: 'unused' },
      { source: { url: repository.url }, helm: { chart: 'web', version: '~1.0.0' }, interval: '1h' },
    );
    await waitForReady(c, namespace, 'pinned', 'True', (v) => revisionOf(v).startsWith('web@1.0.0@'), 60_000);
    // The pull-request review: what would bumping the range to 1.1 change? The CLI, as a user runs it,
    // trusting the repository's CA as the controller does.
    const preview = await runShippedCli(
      [
        'diff',
        '--applyset-object',
        'pinned',
        '-n',
        namespace,
        '--ref',
        '~1.1.0',
        '-o',
        'markdown',
        '--allowed-source-hosts',
        '127.0.0.1',
        '--helm-binary',
        await helmBinary(),
      ],
      { ...process.env, KUBECONFIG: adminKubeconfigPath(), NODE_EXTRA_CA_CERTS: repository.caFile },
    );
    // Exit 1: the preview found changes, as kubectl diff says so.
    expect(preview.code).toBe(1);
    expect(preview.stdout).toContain('web@1.1.0@sha256:');
    expect(preview.stdout).toContain('1 to configure');
    expect(preview.stdout).toContain('pinned-main');
    expect(preview.stdout).toMatch(/1\.1\.0/);
    // Nothing was applied by the preview.
    expect(await data('pinned-main')).toEqual({ greeting: 'hello', version: '1.0.0' });

    await patchApplySet(namespace, 'pinned', { spec: { helm: { version: '~1.1.0' } } });
    await waitForReady(c, namespace, 'pinned', 'True', (v) => revisionOf(v).startsWith('web@1.1.0@'), 60_000);
    expect(await data('pinned-main')).toEqual({ greeting: 'hello', version: '1.1.0' });
  });

  it('stalls on a range no version satisfies, naming the newest versions listed', async () => {
    await createApplySetWithSpec(
      c,
      namespace,
      'future',
      { url: 'unused' },
      {
        source: { url: repository.url },
        helm: { chart: 'web', version: '>=5.0.0' },
      },
    );
    const view = await waitForReady(
      c,
      namespace,
      'future',
      'False',
      (v) => condition(v, 'Stalled')?.reason === 'HelmChartVersionNotFound',
      60_000,
    );
    expect(condition(view, 'Ready')?.message).toContain(
      `${repository.url}: no version of chart web satisfies spec.helm.version ">=5.0.0"; the newest listed: 1.1.0, 1.0.0`,
    );
  });

  it('is refused by the API server with both a ref and a chart, and with neither', async () => {
    const create = (name: string, source: object, helm: object) =>
      createApplySetWithSpec(c, namespace, name, { url: 'unused' }, { source, helm });
    await expect(
      create('both', { url: repository.url, ref: { tag: 'v1' } }, { chart: 'web' }),
    ).rejects.toThrow(/spec.source.ref is required, and must not be set with spec.helm.chart/);
    await expect(create('neither', { url: repository.url }, {})).rejects.toThrow(
      /spec.source.ref is required, and must not be set with spec.helm.chart/,
    );
  });

  it('applies a chart helm pushed to an OCI registry, its tag chosen by the range', async () => {
    const tgz = await repository.packageChart('web', chart('2.3.0'));
    await repository.helm(['push', tgz, `oci://${registry.host}/charts`, '--plain-http']);
    await createApplySetWithSpec(
      c,
      namespace,
      'pushed',
      { url: 'unused' },
      {
        source: { url: `oci://${registry.host}/charts`, insecure: true },
        helm: { chart: 'web', version: '2.x' },
      },
    );
    const view = await waitForReady(
      c,
      namespace,
      'pushed',
      'True',
      (v) => revisionOf(v).startsWith('2.3.0@'),
      60_000,
    );
    expect(revisionOf(view)).toMatch(/^2\.3\.0@sha256:[a-f0-9]{64}$/);
    expect(await data('pushed-main')).toEqual({ greeting: 'hello', version: '2.3.0' });
  });
});
