/**
 * The controller's chart render against `helm template` run directly: charts committed to a real Git
 * server, read by the controller's Git source (its private copy of the commit's tree, helm in its
 * sandbox) give byte for byte what helm prints for a checkout of the same files.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ResolvedHelmSpec } from '../../src/api/applyset-types.js';
import { createGitSource, type GitSource } from '../../src/git/git-source.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { decodeManifestFiles } from '../../src/manifests/decode-manifest-files.js';
import { manifestLimits } from '../../src/manifests/manifest-limits.js';
import { commitReader } from '../../src/source/git/commit-reader.js';
import { directoryReader } from '../../src/source/directory-reader.js';
import { startGitServer, type FileTree, type GitTestServer } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { webChart } from './test-charts.js';

const execFileAsync = promisify(execFile);

async function checkout(files: FileTree): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'helm-checkout-'));
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

const base: ResolvedHelmSpec = {
  chart: undefined,
  releaseName: 'web',
  namespace: 'team-a',
  values: {},
  valuesFiles: [],
  valuesFrom: [],
  includeCRDs: true,
  // Byte for byte: the objects of crds/ are not marked to be kept (the default, checked on its own below).
  pruneCRDs: true,
  skipTests: true,
};

/** The cases: each spec.helm, and what the objects rendered must show of it. */
const cases: [string, ResolvedHelmSpec, (kinds: string[]) => void][] = [
  [
    'the defaults: CRDs in, tests out',
    base,
    (kinds) =>
      expect(kinds).toEqual(
        expect.arrayContaining([
          'CustomResourceDefinition/widgets.example.com',
          'ConfigMap/web-cache',
          'ConfigMap/web-extra',
        ]),
      ),
  ],
  [
    'values files and inline values, the inline winning',
    { ...base, valuesFiles: ['values/prod.yaml'], values: { replicas: 5, cache: { size: 128 } } },
    (kinds) => expect(kinds).toContain('Deployment/web-web'),
  ],
  [
    'a value turning a template off',
    { ...base, values: { extra: { enabled: false } } },
    (kinds) => expect(kinds).not.toContain('ConfigMap/web-extra'),
  ],
  [
    'CRDs left out',
    { ...base, includeCRDs: false },
    (kinds) => expect(kinds).not.toContain('CustomResourceDefinition/widgets.example.com'),
  ],
  [
    'test hooks kept',
    { ...base, skipTests: false, releaseName: 'other', namespace: 'ns-b' },
    (kinds) => expect(kinds).toContain('Pod/other-test'),
  ],
];

describe('Helm charts, against helm template', () => {
  let git: GitTestServer;
  let cacheDir: string;
  let source: GitSource;
  let checkoutDir: string;
  let commit: string;
  let binary: string;

  beforeAll(async () => {
    binary = await helmBinary();
    git = await startGitServer({ files: webChart });
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'helm-differential-'));
    source = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'] });
    ({ commit } = await source.fetch({ url: git.url, ref: { branch: 'main' } }));
    checkoutDir = await checkout(webChart);
  });

  afterAll(async () => {
    await git?.close();
    await rm(cacheDir, { recursive: true, force: true });
    await rm(checkoutDir, { recursive: true, force: true });
  });

  const options = () => ({ ...DEFAULT_KUSTOMIZE_OPTIONS, helmBinary: binary });

  /** `helm template` as a user runs it on the checkout, the inline values in a file of their own. */
  async function helmTemplate(helm: ResolvedHelmSpec): Promise<string> {
    const inline = path.join(checkoutDir, 'inline-values.yaml');
    await writeFile(inline, JSON.stringify(helm.values));
    const args = [
      'template',
      helm.releaseName,
      path.join(checkoutDir, 'charts/web'),
      '--namespace',
      helm.namespace,
    ];
    if (helm.includeCRDs) args.push('--include-crds');
    if (helm.skipTests) args.push('--skip-tests');
    for (const file of helm.valuesFiles) args.push('-f', path.join(checkoutDir, file));
    args.push('-f', inline);
    const { stdout } = await execFileAsync(binary, args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  }

  it.each(cases)('renders %s byte for byte as helm template does', async (_name, helm, check) => {
    const read = await commitReader(source, { url: git.url, commit }).read('charts/web', {
      options: options(),
      helm,
      signal: AbortSignal.timeout(60_000),
    });
    if (read.kind !== 'chart') throw new Error('charts/web was not rendered as a chart');
    expect(read.rendered.path).toBe('helm template charts/web');
    const theirs = await helmTemplate(helm);
    expect(read.rendered.text).toBe(theirs);
    const objects = decodeManifestFiles([read.rendered], manifestLimits()).map((entry) => {
      if (entry.type === 'error') throw entry.error;
      return entry.value as { kind: string; metadata: { name: string } };
    });
    check(objects.map((object) => `${object.kind}/${object.metadata.name}`));
  });

  it('marks the objects of crds/ to be kept by default, and changes nothing else of the render', async () => {
    const helm = { ...base, pruneCRDs: false };
    const read = await commitReader(source, { url: git.url, commit }).read('charts/web', {
      options: options(),
      helm,
      signal: AbortSignal.timeout(60_000),
    });
    if (read.kind !== 'chart') throw new Error('charts/web was not rendered as a chart');
    const decode = (text: string) =>
      decodeManifestFiles([{ path: 'render', text }], manifestLimits()).map((entry) => {
        if (entry.type === 'error') throw entry.error;
        return entry.value as { kind: string; metadata: { annotations?: Record<string, string> } };
      });
    const ours = decode(read.rendered.text);
    const theirs = decode(await helmTemplate(helm));
    const crd = ours.find((object) => object.kind === 'CustomResourceDefinition');
    expect(crd?.metadata.annotations?.['applyset.dev/prune']).toBe('disabled');
    const unmarked = ours.map((object) => {
      const annotations = { ...object.metadata.annotations };
      delete annotations['applyset.dev/prune'];
      const { annotations: _marked, ...rest } = object.metadata;
      const metadata = Object.keys(annotations).length === 0 ? rest : { ...rest, annotations };
      return { ...object, metadata };
    });
    expect(unmarked).toEqual(theirs);
    expect(
      ours.filter((object) => object.metadata.annotations?.['applyset.dev/prune'] !== undefined),
    ).toHaveLength(1);
  });

  it('renders a checkout on disk (an OCI artifact, a preview) as it renders a commit', async () => {
    const helm = { ...base, valuesFiles: ['values/prod.yaml'] };
    const read = await directoryReader(checkoutDir).read('charts/web', {
      options: options(),
      helm,
      signal: AbortSignal.timeout(60_000),
    });
    if (read.kind !== 'chart') throw new Error('charts/web was not rendered as a chart');
    expect(read.rendered.text).toBe(await helmTemplate(helm));
  });

  it('gives lookup nothing and .Files.Get nothing outside the chart', async () => {
    const read = await commitReader(source, { url: git.url, commit }).read('charts/web', {
      options: options(),
      helm: base,
      signal: AbortSignal.timeout(60_000),
    });
    if (read.kind !== 'chart') throw new Error('charts/web was not rendered as a chart');
    expect(read.rendered.text).toContain('lookup: "{}"');
    expect(read.rendered.text).toContain('escape: ""');
    expect(read.rendered.text).not.toContain('root:');
  });
});
