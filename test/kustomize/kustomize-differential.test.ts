/**
 * The controller's Kustomize build against `kubectl kustomize`: the same overlays, committed to a real
 * Git server, read by the controller's Git source (its copy of the commit's tree, the pre-scan,
 * kustomize with the root-only load restrictor, without network) and decoded as the controller decodes
 * them, give the same objects as kubectl's own kustomize on a checkout of the same files.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createGitSource, type GitSource } from '../../src/git/git-source.js';
import { commitReader } from '../../src/source/git/commit-reader.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { decodeManifestFiles } from '../../src/manifests/decode-manifest-files.js';
import { manifestLimits, type ManifestFile } from '../../src/manifests/manifest-limits.js';
import { startGitServer, type FileTree, type GitTestServer } from '../harness/git-server.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { overlayRepository } from './kustomize-overlays.js';

const execFileAsync = promisify(execFile);

/** The objects of a manifest file as the controller decodes them; a decoding error fails the test. */
function objectsOf(file: ManifestFile): unknown[] {
  return decodeManifestFiles([file], manifestLimits()).map((entry) => {
    if (entry.type === 'error') throw entry.error;
    return entry.value;
  });
}

async function checkout(files: FileTree): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kustomize-checkout-'));
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

describe('Kustomize builds, against kubectl kustomize', () => {
  let git: GitTestServer;
  let cacheDir: string;
  let source: GitSource;
  let checkoutDir: string;
  let commit: string;
  let binary: string;

  beforeAll(async () => {
    binary = await kustomizeBinary();
    git = await startGitServer({ files: overlayRepository });
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'kustomize-differential-'));
    source = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'] });
    ({ commit } = await source.fetch({ url: git.url, ref: { branch: 'main' } }));
    checkoutDir = await checkout(overlayRepository);
  });

  afterAll(async () => {
    await git?.close();
    await rm(cacheDir, { recursive: true, force: true });
    await rm(checkoutDir, { recursive: true, force: true });
  });

  const build = async (sourcePath: string) => {
    const read = await commitReader(source, { url: git.url, commit }).read(sourcePath, {
      options: { ...DEFAULT_KUSTOMIZE_OPTIONS, binary },
      signal: AbortSignal.timeout(120_000),
    });
    if (read.kind !== 'kustomization') throw new Error(`${sourcePath} was not read as a kustomization`);
    return read.built;
  };

  it.each(['overlays/prod', 'overlays/staging', 'envs/common', 'base', './overlays/prod/'])(
    'builds %s to the objects kubectl kustomize makes of it',
    async (sourcePath) => {
      const ours = await build(sourcePath);
      const { stdout } = await execFileAsync('kubectl', ['kustomize', path.join(checkoutDir, sourcePath)]);
      const theirs = objectsOf({ path: 'kubectl kustomize', text: stdout });
      expect(ours.path).toBe(`kustomize build ${path.posix.normalize(sourcePath).replace(/^\.\/|\/$/g, '')}`);
      expect(objectsOf(ours)).toEqual(theirs);
      expect(theirs.length).toBeGreaterThanOrEqual(3);
    },
  );

  it('rolls the generated names and rewrites every reference to them', async () => {
    const objects = objectsOf(await build('overlays/prod')) as {
      kind: string;
      metadata: { name: string; namespace?: string };
      spec?: {
        template: { spec: { containers: { image: string; envFrom: object[] }[]; volumes: object[] } };
      };
    }[];
    const names = objects.map((object) => `${object.kind}/${object.metadata.name}`);
    const config = names.find((name) => /^ConfigMap\/prod-app-config-v1-[a-z0-9]{10}$/.test(name));
    const secret = names.find((name) => /^Secret\/prod-app-secret-v1-[a-z0-9]{10}$/.test(name));
    expect(config).toBeDefined();
    expect(secret).toBeDefined();
    const web = objects.find((object) => object.kind === 'Deployment');
    expect(web?.metadata).toMatchObject({ name: 'prod-web-v1', namespace: 'shop' });
    const pod = web?.spec?.template.spec;
    expect(pod?.containers[0]?.image).toBe(
      'registry.example.com/nginx@sha256:0000000000000000000000000000000000000000000000000000000000000001',
    );
    expect(pod?.containers[0]?.envFrom).toEqual([
      { configMapRef: { name: config?.split('/')[1] } },
      { secretRef: { name: secret?.split('/')[1] } },
    ]);
  });
});
