import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeApiError } from '../../src/kube/kube-api-error.js';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import {
  createOpenApiPatchMetaSource,
  type PatchMetaSource,
} from '../../src/kube/openapi-patch-meta-source.js';
import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { computeApplyPatch } from '../../src/merge/compute-apply-patch.js';
import {
  buildCreateBody,
  buildLastAppliedConfiguration,
} from '../../src/merge/last-applied-configuration.js';
import {
  adminKubeConfig,
  adminKubeconfigPath,
  createNamespace,
  uniqueName,
} from '../harness/test-cluster.js';
import { comparable, differingPaths } from '../merge-differential/compare-live.js';

/**
 * The worked examples of the kubectl documentation (declarative management with configuration files,
 * the kubectl book's merge chapter, and the restartedAt question), run against the real API server:
 * each with our engine in one namespace and the real `kubectl apply` in another, checking the outcome
 * the documents describe and that both namespaces end up with the same object.
 */
type Applier = 'engine' | 'kubectl';

describe('worked examples of kubectl apply, on the real API server', () => {
  let client: KubeClient;
  let metaSource: PatchMetaSource;
  let cacheDir: string;
  const namespaces: Record<Applier, string> = {
    engine: uniqueName('worked-engine'),
    kubectl: uniqueName('worked-kubectl'),
  };

  beforeAll(async () => {
    const kc = adminKubeConfig();
    client = createKubeClient({ credentials: createKubeCredentials(kc) });
    metaSource = createOpenApiPatchMetaSource({ client });
    cacheDir = await mkdtemp(join(tmpdir(), 'applyset-kubectl-cache-'));
    await Promise.all([createNamespace(kc, namespaces.engine), createNamespace(kc, namespaces.kubectl)]);
  });
  afterAll(async () => {
    await rm(cacheDir, { recursive: true, force: true });
  });

  const deploymentsPath = (applier: Applier) => `/apis/apps/v1/namespaces/${namespaces[applier]}/deployments`;

  /** GET, then create or compute and PATCH, as the controller does. Returns kubectl's verb. */
  async function applyWithEngine(manifest: JsonObject): Promise<string> {
    const namespace = namespaces.engine;
    const object: JsonObject = { ...manifest, metadata: { ...(manifest.metadata as JsonObject), namespace } };
    const name = String((manifest.metadata as JsonObject).name);
    const query = { fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' };
    const current = await getDeployment('engine', name);
    if (current === undefined) {
      const body = buildCreateBody(buildLastAppliedConfiguration(object).modified);
      await client.request({
        method: 'POST',
        path: deploymentsPath('engine'),
        query,
        body: JSON.stringify(body),
      });
      return 'created';
    }
    const meta = await metaSource.metaFor({ group: 'apps', version: 'v1', kind: 'Deployment' });
    const result = computeApplyPatch({ manifest: object, current, meta });
    if (result.kind === 'unchanged') return 'unchanged';
    await client.request({
      method: 'PATCH',
      path: `${deploymentsPath('engine')}/${name}`,
      query,
      body: result.body,
      contentType: result.patchType,
    });
    return 'configured';
  }

  async function kubectl(args: readonly string[], input?: string): Promise<string> {
    const all = [
      '--kubeconfig',
      adminKubeconfigPath(),
      '--cache-dir',
      cacheDir,
      '-n',
      namespaces.kubectl,
      ...args,
    ];
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', all, { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err}`)),
      );
      child.stdin.end(input ?? '');
    });
  }

  async function applyBoth(manifest: JsonObject): Promise<Record<Applier, string>> {
    const [engine, byKubectl] = await Promise.all([
      applyWithEngine(manifest),
      kubectl(['apply', '-f', '-'], JSON.stringify(manifest)),
    ]);
    return { engine, kubectl: / (created|configured|unchanged)$/m.exec(byKubectl)?.[1] ?? byKubectl };
  }

  /** Another writer's PATCH, sent to both namespaces. */
  async function patchBoth(name: string, contentType: string, patch: JsonObject): Promise<void> {
    await Promise.all(
      (['engine', 'kubectl'] as const).map((applier) =>
        client.request({
          method: 'PATCH',
          path: `${deploymentsPath(applier)}/${name}`,
          body: JSON.stringify(patch),
          contentType,
        }),
      ),
    );
  }

  async function getDeployment(applier: Applier, name: string): Promise<JsonObject | undefined> {
    try {
      const live = await client.request({ method: 'GET', path: `${deploymentsPath(applier)}/${name}` });
      return isJsonObject(live) ? live : undefined;
    } catch (error) {
      if (error instanceof KubeApiError && error.notFound) return undefined;
      throw error;
    }
  }

  /** Both live objects, after checking they agree. */
  async function liveBoth(name: string): Promise<JsonObject> {
    const [engine, byKubectl] = await Promise.all([
      getDeployment('engine', name),
      getDeployment('kubectl', name),
    ]);
    const a = comparable(byKubectl, namespaces.kubectl, namespaces.engine);
    const b = comparable(engine, namespaces.kubectl, namespaces.engine);
    expect(differingPaths(a, b)).toEqual([]);
    if (engine === undefined) throw new Error(`deployment ${name} is missing`);
    return engine;
  }

  function deployment(name: string, spec: JsonObject, podSpec: JsonObject): JsonObject {
    return {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        selector: { matchLabels: { app: name } },
        ...spec,
        template: { metadata: { labels: { app: name } }, spec: podSpec },
      },
    };
  }

  const spec = (live: JsonObject) => live.spec as JsonObject;
  const podSpec = (live: JsonObject) => (spec(live).template as JsonObject).spec as JsonObject;
  const containers = (live: JsonObject) => podSpec(live).containers as JsonObject[];

  it('clears minReadySeconds when the file no longer sets it', async () => {
    const name = 'min-ready';
    const nginx = { containers: [{ name: 'nginx', image: 'nginx:1.7.9', ports: [{ containerPort: 80 }] }] };
    expect(await applyBoth(deployment(name, { minReadySeconds: 5 }, nginx))).toEqual({
      engine: 'created',
      kubectl: 'created',
    });
    expect(spec(await liveBoth(name)).minReadySeconds).toBe(5);

    expect(await applyBoth(deployment(name, {}, nginx))).toEqual({
      engine: 'configured',
      kubectl: 'configured',
    });
    expect(spec(await liveBoth(name)).minReadySeconds).toBeUndefined();
  });

  it('keeps the replicas kubectl scale set when the file never sets replicas', async () => {
    const name = 'scaled';
    await applyBoth(deployment(name, {}, { containers: [{ name: 'nginx', image: 'nginx:1.7.9' }] }));
    // kubectl scale writes the scale subresource, in both namespaces.
    await Promise.all([
      kubectl(['scale', `deployment/${name}`, '--replicas=3']),
      client.request({
        method: 'PATCH',
        path: `${deploymentsPath('engine')}/${name}/scale`,
        body: JSON.stringify({ spec: { replicas: 3 } }),
        contentType: 'application/merge-patch+json',
      }),
    ]);
    expect(
      await applyBoth(deployment(name, {}, { containers: [{ name: 'nginx', image: 'nginx:1.11.9' }] })),
    ).toEqual({ engine: 'configured', kubectl: 'configured' });
    const live = await liveBoth(name);
    expect(spec(live).replicas).toBe(3);
    expect(containers(live)[0]?.image).toBe('nginx:1.11.9');
  });

  it('replaces args as a whole: an item another writer added is dropped', async () => {
    // The kubectl book's merge chapter shows args merged; the documentation and kubectl replace
    // them, since Container.args has no patch strategy
    // (docs/merge-semantics.md#8-patch-metadata).
    const name = 'args';
    const withArgs = (args: string[]) =>
      deployment(name, {}, { containers: [{ name: 'app', image: 'busybox:1.36', args }] });
    await applyBoth(withArgs(['a', 'b']));
    // Another writer appends "d" with a JSON patch.
    await Promise.all(
      (['engine', 'kubectl'] as const).map((applier) =>
        client.request({
          method: 'PATCH',
          path: `${deploymentsPath(applier)}/${name}`,
          body: JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: 'd' }]),
          contentType: 'application/json-patch+json',
        }),
      ),
    );
    expect(containers(await liveBoth(name))[0]?.args).toEqual(['a', 'b', 'd']);

    await applyBoth(withArgs(['a', 'c']));
    expect(containers(await liveBoth(name))[0]?.args).toEqual(['a', 'c']);
  });

  it('merges containers by name: removed ones go, added ones come, live-only containers and fields stay', async () => {
    const name = 'containers';
    const helper = (n: string) => ({ name: n, image: 'helper:1.3' });
    await applyBoth(
      deployment(
        name,
        {},
        {
          containers: [
            { name: 'nginx', image: 'nginx:1.10' },
            helper('nginx-helper-a'),
            helper('nginx-helper-b'),
          ],
        },
      ),
    );
    // Another writer gives helper-b args and adds helper-d.
    await patchBoth(name, 'application/strategic-merge-patch+json', {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'nginx-helper-b', args: ['run'] },
              { name: 'nginx-helper-d', image: 'helper:1.3' },
            ],
          },
        },
      },
    });
    await applyBoth(
      deployment(
        name,
        {},
        {
          containers: [
            { name: 'nginx', image: 'nginx:1.10' },
            helper('nginx-helper-b'),
            helper('nginx-helper-c'),
          ],
        },
      ),
    );
    const live = containers(await liveBoth(name));
    expect(live.map((c) => c.name).sort()).toEqual([
      'nginx',
      'nginx-helper-b',
      'nginx-helper-c',
      'nginx-helper-d',
    ]);
    expect(live.find((c) => c.name === 'nginx-helper-b')?.args).toEqual(['run']);
  });

  it('keeps the restartedAt annotation kubectl rollout restart set, while the file changes', async () => {
    const name = 'restarted';
    const manifest = (image: string) => deployment(name, {}, { containers: [{ name: 'app', image }] });
    await applyBoth(manifest('nginx:1.25'));
    await kubectl(['rollout', 'restart', `deployment/${name}`]);
    // kubectl rollout restart stamps the current time with this patch; the engine's namespace gets the
    // same patch, and both the same stamp so the objects compare equal.
    await patchBoth(name, 'application/strategic-merge-patch+json', {
      spec: {
        template: {
          metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2022-07-26T11:44:32+08:00' } },
        },
      },
    });
    expect(await applyBoth(manifest('nginx:1.27'))).toEqual({ engine: 'configured', kubectl: 'configured' });
    const live = await liveBoth(name);
    const template = spec(live).template as JsonObject;
    expect((template.metadata as JsonObject).annotations).toEqual({
      'kubectl.kubernetes.io/restartedAt': '2022-07-26T11:44:32+08:00',
    });
    expect(containers(live)[0]?.image).toBe('nginx:1.27');
    // And applying the same file again is a no-op for both.
    expect(await applyBoth(manifest('nginx:1.27'))).toEqual({ engine: 'unchanged', kubectl: 'unchanged' });
  });
});
