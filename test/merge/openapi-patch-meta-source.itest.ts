import { KubeConfig as KubeConfigClass, type KubeConfig } from '@kubernetes/client-node';
import { createKubeClient, type KubeMethod } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenApiDiskCache } from '../../src/kube/openapi-disk-cache.js';
import { createOpenApiPatchMetaSource } from '../../src/kube/openapi-patch-meta-source.js';
import type { PatchMeta } from '../../src/merge/patch-meta.js';
import { adminKubeConfig, uniqueName } from '../harness/test-cluster.js';
import { installCrd, type InstalledCrd } from '../merge-differential/install-crd.js';

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

    await source.metaFor({ group: 'apps', version: 'v1', kind: 'StatefulSet' });
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
