import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { emptyFilesTar, gzipLazily, tarOf, zeros } from '../harness/artifact-layer.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../harness/oci-tools.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  installCrd,
  startController,
  stopAllControllers,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';

// Issue #35: an OCI artifact's layer is hostile input. A gzip bomb, a tar of 100,000 entries, a path
// with `..` and a link out of the tree each stall only their own ApplySet, naming the limit or the
// entry, while another tenant's set on the same controller is applied; and the controller's peak
// memory (VmHWM of its process) stays far from what the layers would expand to.

const MiB = 1024 * 1024;

async function peakRssMiB(controller: ControllerProcess): Promise<number> {
  const status = await readFile(`/proc/${controller.child.pid}/status`, 'utf8');
  const kib = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return Math.round(kib / 1024);
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('the bounds of an OCI artifact layer, as the controller meets them', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-oci-bounds');
  let tools: OciTools;
  let registry: OciRegistry;
  let controller: ControllerProcess;
  const peaks: Record<string, number> = {};

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    tools = await startOciTools();
    registry = await startOciRegistry();
    controller = await startController({
      namespace,
      env: { APPLYSET_KUSTOMIZE_BINARY: await kustomizeBinary() },
    });
    peaks['started'] = await peakRssMiB(controller);
  }, 120_000);

  afterAll(async () => {
    // The figures the issue asks to see, beside the test's verdicts.
    process.stdout.write(`controller peak RSS (VmHWM, MiB) after each case: ${JSON.stringify(peaks)}\n`);
    await stopAllControllers();
    await registry?.stop();
    await tools?.cleanup();
  });

  const pushLayer = (name: string, layer: Buffer) =>
    tools.pushArtifact(`${registry.host}/hostile/${name}:v1`, {}, { rawLayer: layer });
  const refusedWith = async (name: string, reason: string, words: string) => {
    await createApplySetWithSpec(
      c,
      namespace,
      name,
      { url: 'unused' },
      {
        source: { url: `oci://${registry.host}/hostile/${name}`, ref: { tag: 'v1' }, insecure: true },
      },
    );
    const view = await waitForReady(
      c,
      namespace,
      name,
      'False',
      (v) => condition(v, 'Stalled')?.reason === reason,
      90_000,
    );
    expect(condition(view, 'Ready')?.message).toContain(words);
    expect(controller.child.exitCode).toBeNull();
    peaks[name] = await peakRssMiB(controller);
    expect(peaks[name]).toBeLessThan(400);
  };

  it('stops a gzip bomb (1 GiB of zeros in about 1 MiB) at 200 MiB expanded', async () => {
    const prefix = (await tarOf([{ header: { name: 'a.yaml' }, content: 'a: 1\n' }])).subarray(0, 1024);
    const layer = await collect(gzipLazily([prefix, ...zeros(1024 * MiB)]));
    expect(layer.length).toBeLessThan(2 * MiB);
    await pushLayer('bomb', layer);
    await refusedWith(
      'bomb',
      'ArtifactTooLarge',
      'expands past 200 MiB (--oci-max-expanded-bytes); nothing was applied',
    );
  });

  it('stops a tar of 100,000 entries at 10,000', async () => {
    await pushLayer('entries', gzipSync(await emptyFilesTar(100_000, (index) => `f${index}.yaml`)));
    await refusedWith('entries', 'ArtifactTooLarge', '(--oci-max-files)');
  });

  it('refuses a path with .. and a link out of the tree', async () => {
    await pushLayer(
      'dotdot',
      gzipSync(await tarOf([{ header: { name: '../../escape.yaml' }, content: 'a: 1\n' }])),
    );
    await refusedWith('dotdot', 'ArtifactUnsafe', '../../escape.yaml');
    const link = await tarOf([{ header: { name: 'passwd.yaml', type: 'symlink', linkname: '/etc/passwd' } }]);
    await pushLayer('link', gzipSync(link));
    await refusedWith('link', 'ArtifactUnsafe', 'passwd.yaml');
  });

  it("refuses a kustomization that reaches for another artifact's files in the cache", async () => {
    await tools.pushArtifact(`${registry.host}/hostile/victim:v1`, {
      'app/kustomization.yaml': 'resources: [cm.yaml]\n',
      'app/cm.yaml': configMapYaml('victim-only', { token: 'victims-own' }),
    });
    await createApplySetWithSpec(
      c,
      namespace,
      'victim',
      { url: 'unused' },
      {
        source: {
          url: `oci://${registry.host}/hostile/victim`,
          ref: { tag: 'v1' },
          path: 'app',
          insecure: true,
        },
      },
    );
    await waitForReady(c, namespace, 'victim', 'True', () => true, 60_000);
    // The victim's layer is extracted beside the thief's, named by its digest, which the registry tells anyone.
    const manifest = (await (
      await fetch(`${registry.url}/v2/hostile/victim/manifests/v1`, {
        headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
      })
    ).json()) as { layers: { digest: string }[] };
    const victimDir = manifest.layers[0]!.digest.replace(':', '-');
    await tools.pushArtifact(`${registry.host}/hostile/thief:v1`, {
      'kustomization.yaml': `resources: [../${victimDir}/app]\nnamePrefix: stolen-\n`,
    });
    await refusedWith(
      'thief',
      'KustomizationRefused',
      `resources entry "../${victimDir}/app" leaves the repository root`,
    );
    expect(await configMapData(c, namespace, 'stolen-victim-only')).toBeUndefined();
  });

  it('still applies another tenant set on the same controller after them', async () => {
    await tools.pushArtifact(`${registry.host}/fine/app:v1`, {
      'ok.yaml': configMapYaml('beside-the-bombs', { k: 'v' }),
    });
    await createApplySetWithSpec(
      c,
      namespace,
      'fine',
      { url: 'unused' },
      {
        source: { url: `oci://${registry.host}/fine/app`, ref: { tag: 'v1' }, insecure: true },
      },
    );
    await waitForReady(c, namespace, 'fine', 'True', () => true, 60_000);
    expect(await configMapData(c, namespace, 'beside-the-bombs')).toEqual({ k: 'v' });
  });
});
