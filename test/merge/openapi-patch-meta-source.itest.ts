import { KubeConfig as KubeConfigClass, type KubeConfig } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createKubeClient, type KubeClient, type KubeMethod } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenApiDiskCache } from '../../src/kube/openapi-disk-cache.js';
import { createOpenApiPatchMetaSource } from '../../src/kube/openapi-patch-meta-source.js';
import type { GroupVersionKind } from '../../src/manifests/object-ref.js';
import type { PatchMeta } from '../../src/merge/patch-meta.js';
import { adminKubeConfig, adminKubeconfigPath, uniqueName } from '../harness/test-cluster.js';
import { installCrd, type InstalledCrd } from '../merge-differential/install-crd.js';

const execFileAsync = promisify(execFile);
const deployment = { group: 'apps', version: 'v1', kind: 'Deployment' };
const job = { group: 'batch', version: 'v1', kind: 'Job' };
const APPS_V1 = '/openapi/v3/apis/apps/v1';

/**
 * One source over a client that notes what each answer's body weighed (onBodyBytes, by path), asked
 * for the kinds of `sequence` in turn; the paths it requested.
 */
async function weighedRun(
  kc: KubeConfig,
  maxDocumentBytes: number | undefined,
  sequence: readonly GroupVersionKind[],
): Promise<{ sizes: Map<string, number>; requests: string[] }> {
  const sizes = new Map<string, number>();
  const requests: string[] = [];
  const client = createKubeClient({
    credentials: createKubeCredentials(kc),
    onRequest: (_method, path) => requests.push(path),
  });
  const weighing: KubeClient = {
    ...client,
    request: (req) =>
      client.request({
        ...req,
        onBodyBytes: (bytes) => {
          sizes.set(req.path, bytes);
          req.onBodyBytes?.(bytes);
        },
      }),
  };
  const source = createOpenApiPatchMetaSource({
    client: weighing,
    ...(maxDocumentBytes === undefined ? {} : { maxDocumentBytes }),
  });
  for (const gvk of sequence) await source.metaFor(gvk);
  return { sizes, requests };
}

const sameSizes = (a: Map<string, number>, b: Map<string, number>) =>
  a.size === b.size && [...a].every(([path, bytes]) => b.get(path) === bytes);

function asStrategic(meta: PatchMeta | 'json-merge'): PatchMeta {
  if (meta === 'json-merge') throw new Error('expected strategic merge metadata, got json-merge');
  return meta;
}

describe('OpenAPI patch metadata source against the real API server', () => {
  let kc: KubeConfig;
  let crd: InstalledCrd;

  beforeAll(async () => {
    kc = adminKubeConfig();
    crd = await installCrd(kc, uniqueName('meta'));
  });
  afterAll(async () => {
    await crd.remove();
  });

  it('reads PodSpec.containers as merged by name from the server OpenAPI v3, fetching each document once', async () => {
    const requests: string[] = [];
    const onRequest = (_method: KubeMethod, path: string) => requests.push(path);
    const source = createOpenApiPatchMetaSource({
      client: createKubeClient({ credentials: createKubeCredentials(kc), onRequest }),
    });
    const gvk = { group: 'apps', version: 'v1', kind: 'Deployment' };
    const [deployment] = await Promise.all([source.metaFor(gvk), source.metaFor(gvk)]);
    const podSpec = asStrategic(deployment)
      .lookupObjectField('spec')
      .meta.lookupObjectField('template')
      .meta.lookupObjectField('spec').meta;
    const containers = podSpec.lookupListField('containers');
    expect(containers).toMatchObject({ strategies: ['merge'], mergeKey: 'name' });
    expect(containers.meta.lookupListField('ports')).toMatchObject({ mergeKey: 'containerPort' });
    // Not in the committed table's shape: the schema knows unknown fields, as kubectl's lookup does.
    expect(() => podSpec.lookupObjectField('noSuchField')).toThrow(/unable to find api field/);

    // Read from the document once per kind: a later lookup (another run's engine) gets the same answer,
    // whose field lookups are already made.
    expect(await source.metaFor(gvk)).toBe(deployment);
    const statefulSet = await source.metaFor({ group: 'apps', version: 'v1', kind: 'StatefulSet' });
    expect(statefulSet).not.toBe(deployment);
    expect(requests.filter((path) => path === '/openapi/v3')).toHaveLength(1);
    expect(requests.filter((path) => path === '/openapi/v3/apis/apps/v1')).toHaveLength(1);
    expect(requests).not.toContain('/openapi/v2');
  });

  it('keeps documents within maxDocumentBytes, the least recently used going first', async () => {
    const requests: string[] = [];
    const onRequest = (_method: KubeMethod, path: string) => requests.push(path);
    const client = createKubeClient({ credentials: createKubeCredentials(kc), onRequest });
    const deployment = { group: 'apps', version: 'v1', kind: 'Deployment' };
    const job = { group: 'batch', version: 'v1', kind: 'Job' };
    const fetchesOfApps = () => requests.filter((path) => path === '/openapi/v3/apis/apps/v1').length;
    // Room for the index and one group-version document: reading batch/v1 pushes apps/v1 out.
    const tight = createOpenApiPatchMetaSource({ client, maxDocumentBytes: 200_000 });
    await tight.metaFor(deployment);
    await tight.metaFor(job);
    await tight.metaFor(deployment);
    expect(fetchesOfApps()).toBe(2);
    requests.length = 0;
    const roomy = createOpenApiPatchMetaSource({ client });
    await roomy.metaFor(deployment);
    await roomy.metaFor(job);
    await roomy.metaFor(deployment);
    expect(fetchesOfApps()).toBe(1);
  });

  it('reports the byte length of a body as the server sent it (onBodyBytes), as kubectl get --raw reads it', async () => {
    const client = createKubeClient({ credentials: createKubeCredentials(kc) });
    const index = (await client.request({ method: 'GET', path: '/openapi/v3' })) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    // The group-version document's URL names its content hash: both reads get the same bytes.
    const url = new URL(index.paths['apis/apps/v1']?.serverRelativeURL ?? '', 'http://server.invalid');
    let bytes = -1;
    await client.request({
      method: 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      onBodyBytes: (received) => (bytes = received),
    });
    const { stdout } = await execFileAsync(
      'kubectl',
      ['--kubeconfig', adminKubeconfigPath(), 'get', '--raw', `${url.pathname}${url.search}`],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(bytes).toBe(stdout.length);
  });

  it('weighs each document by the bytes of its body: a bound of exactly their sum keeps all, a byte less drops one', async () => {
    const fetchesOfApps = (requests: readonly string[]) => requests.filter((path) => path === APPS_V1).length;
    // The v3 index grows when another test file installs a CRD meanwhile: measure again until the
    // three runs saw the same bodies.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const measured = await weighedRun(kc, undefined, [deployment, job]);
      const total = [...measured.sizes.values()].reduce((sum, bytes) => sum + bytes, 0);
      const exact = await weighedRun(kc, total, [deployment, job, deployment]);
      const short = await weighedRun(kc, total - 1, [deployment, job, deployment]);
      if (!sameSizes(measured.sizes, exact.sizes) || !sameSizes(measured.sizes, short.sizes)) continue;
      expect([...measured.sizes.keys()].sort()).toEqual([
        '/openapi/v3',
        APPS_V1,
        '/openapi/v3/apis/batch/v1',
      ]);
      expect(fetchesOfApps(exact.requests)).toBe(1);
      // The index, used again for the Job, is newer than apps/v1, which goes first.
      expect(fetchesOfApps(short.requests)).toBe(2);
      return;
    }
    throw new Error('the OpenAPI index kept changing under the test');
  });

  it('reads the v3 index again once it is older than indexMaxAgeMs, and no document it already has', async () => {
    const requests: string[] = [];
    const onRequest = (_method: KubeMethod, path: string) => requests.push(path);
    let now = 0;
    const source = createOpenApiPatchMetaSource({
      client: createKubeClient({ credentials: createKubeCredentials(kc), onRequest }),
      indexMaxAgeMs: 60_000,
      now: () => now,
    });
    const configMap = { group: '', version: 'v1', kind: 'ConfigMap' };
    await source.metaFor(configMap);
    now = 59_999;
    await source.metaFor(configMap);
    expect(requests.filter((path) => path === '/openapi/v3')).toHaveLength(1);
    now = 60_000;
    await source.metaFor(configMap);
    // A long-running controller notices a new schema: the index again, but the api/v1 document, whose
    // URL names its content hash, is the same one and not downloaded twice.
    expect(requests.filter((path) => path === '/openapi/v3')).toHaveLength(2);
    expect(requests.filter((path) => path === '/openapi/v3/api/v1')).toHaveLength(1);
  });

  it('keeps hashed documents on disk: a second run reads the index only, a damaged file is downloaded again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'applyset-openapi-cache-'));
    try {
      const run = async () => {
        const requests: string[] = [];
        const onRequest = (_method: KubeMethod, path: string) => requests.push(path);
        const source = createOpenApiPatchMetaSource({
          client: createKubeClient({ credentials: createKubeCredentials(kc), onRequest }),
          store: createOpenApiDiskCache(dir),
        });
        const deployment = asStrategic(
          await source.metaFor({ group: 'apps', version: 'v1', kind: 'Deployment' }),
        );
        expect(deployment.lookupObjectField('spec').meta.lookupObjectField('template')).toBeDefined();
        return requests;
      };
      expect(await run()).toEqual(['/openapi/v3', '/openapi/v3/apis/apps/v1']);
      expect(await run()).toEqual(['/openapi/v3']);
      const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
      await writeFile(join(dir, file ?? 'missing.json'), '{"cut short');
      expect(await run()).toEqual(['/openapi/v3', '/openapi/v3/apis/apps/v1']);
      expect(await run()).toEqual(['/openapi/v3']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says json-merge for a custom resource whose CRD the server serves', async () => {
    const source = createOpenApiPatchMetaSource({
      client: createKubeClient({ credentials: createKubeCredentials(kc) }),
    });
    await expect(source.metaFor(crd.gvk)).resolves.toBe('json-merge');
    const configMap = asStrategic(await source.metaFor({ group: '', version: 'v1', kind: 'ConfigMap' }));
    expect(configMap.lookupObjectField('metadata').meta.lookupListField('finalizers')).toMatchObject({
      strategies: ['merge'],
    });
  });

  it('falls back to the built-in table when the server cannot be reached', async () => {
    // Port 1 on loopback: nothing listens, so every request fails at once with ECONNREFUSED.
    const offline = new KubeConfigClass();
    offline.loadFromOptions({
      clusters: kc.clusters.map((cluster) => ({ ...cluster, server: 'https://127.0.0.1:1' })),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
    const errors: string[] = [];
    const source = createOpenApiPatchMetaSource({
      client: createKubeClient({ credentials: createKubeCredentials(offline), timeoutMs: 2_000 }),
      onFetchError: (path) => errors.push(path),
    });
    const meta = asStrategic(await source.metaFor({ group: 'apps', version: 'v1', kind: 'Deployment' }));
    expect(
      meta
        .lookupObjectField('spec')
        .meta.lookupObjectField('template')
        .meta.lookupObjectField('spec')
        .meta.lookupListField('containers'),
    ).toMatchObject({ mergeKey: 'name' });
    await expect(source.metaFor({ group: 'example.com', version: 'v1', kind: 'Widget' })).resolves.toBe(
      'json-merge',
    );
    expect(errors).toContain('/openapi/v3');
  });
});
