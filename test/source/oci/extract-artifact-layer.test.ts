/**
 * extractArtifactLayer against layers as registries serve them (tar-stream's pack, the system's `tar`)
 * and as a hostile tenant could craft them: a gzip bomb, too many entries, a file too large, corrupt or
 * cut-short streams, and a reconcile that stops midway. Unsafe entries are in
 * extract-artifact-layer-unsafe.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DEFAULT_ARTIFACT_LIMITS, type ArtifactLimits } from '../../../src/source/oci/artifact-limits.js';
import { ArtifactRefusedError } from '../../../src/source/oci/artifact-refused-error.js';
import { extractArtifactLayer } from '../../../src/source/oci/extract-artifact-layer.js';
import {
  bodyOf,
  emptyFilesTar,
  gzipLazily,
  layerOf,
  makeTarget,
  systemTarLayer,
  tarOf,
  treeOf,
  zeros,
} from '../../harness/artifact-layer.js';

const artifact =
  'oci://registry.example.com/team/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const MiB = 1024 * 1024;
const DEPLOY = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n';
const CONFIG = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  a: "1"\n';

let target: Awaited<ReturnType<typeof makeTarget>>;
let umask: number;
beforeAll(() => {
  umask = process.umask(0o022);
});
afterAll(() => process.umask(umask));
beforeEach(async () => {
  target = await makeTarget();
});
afterEach(() => target.remove());

function extract(
  body: AsyncIterable<Uint8Array>,
  limits: Partial<ArtifactLimits> = {},
  signal?: AbortSignal,
) {
  return extractArtifactLayer(body, target.target, {
    limits: { ...DEFAULT_ARTIFACT_LIMITS, ...limits },
    signal: signal ?? new AbortController().signal,
    describe: artifact,
  });
}

async function refusal(promise: Promise<unknown>): Promise<ArtifactRefusedError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ArtifactRefusedError);
  expect((error as ArtifactRefusedError).intent).toBe('stalled');
  return error as ArtifactRefusedError;
}

describe('extractArtifactLayer', () => {
  it('writes a tree byte for byte, as files 0644 or 0755 and directories 0755, whatever the tar says', async () => {
    const layer = await layerOf([
      { header: { name: 'apps/', type: 'directory', mode: 0o777 } },
      { header: { name: 'apps/prod/deploy.yaml', mode: 0o666 }, content: DEPLOY },
      { header: { name: 'apps/prod/my config.yaml', mode: 0o600 }, content: CONFIG },
      { header: { name: './apps/base/empty.yaml' }, content: '' },
      { header: { name: 'hooks/run.sh', mode: 0o4775 }, content: '#!/bin/sh\n' },
    ]);
    await expect(extract(bodyOf(layer, 100))).resolves.toEqual({
      files: 4,
      bytes: DEPLOY.length + CONFIG.length + 10,
    });
    expect(await treeOf(target.target)).toEqual({
      apps: { content: 'dir/', mode: '755' },
      'apps/base': { content: 'dir/', mode: '755' },
      'apps/base/empty.yaml': { content: '', mode: '644' },
      'apps/prod': { content: 'dir/', mode: '755' },
      'apps/prod/deploy.yaml': { content: DEPLOY, mode: '644' },
      'apps/prod/my config.yaml': { content: CONFIG, mode: '644' },
      hooks: { content: 'dir/', mode: '755' },
      'hooks/run.sh': { content: '#!/bin/sh\n', mode: '755' },
    });
  });

  it.each([
    ['GNU format, a long name in a GNU long-name entry', []],
    ['pax format, with a global header', ['--format=pax', '--pax-option=comment=pushed by CI']],
  ])('reads what the system tar writes: %s', async (_format, options) => {
    const source = join(target.parent, 'source');
    const deep = join(source, 'clusters', 'production-europe-west', 'namespaces', 'team-payments-gateway');
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, `${'long-name-'.repeat(8)}deployment.yaml`), DEPLOY);
    await writeFile(join(source, 'clusters', 'kustomization with spaces.yaml'), CONFIG);
    await mkdir(join(source, 'empty-dir'));
    await extract(bodyOf(systemTarLayer(source, options)));
    expect(await treeOf(target.target)).toEqual(await treeOf(source));
    await rm(source, { recursive: true });
  });

  it('stops a gzip bomb at the expanded limit, fast and in little memory', async () => {
    const prefix = (await tarOf([{ header: { name: 'a.yaml' }, content: CONFIG }])).subarray(0, 1024);
    let inflatable = 0;
    function* bomb() {
      yield prefix;
      for (const block of zeros(1024 * MiB)) {
        inflatable += block.length;
        yield block;
      }
    }
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const started = Date.now();
    const error = await refusal(extract(gzipLazily(bomb())));
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(error.reason).toBe('ArtifactTooLarge');
    expect(error.message).toBe(
      `artifact ${artifact} expands past 200 MiB (--oci-max-expanded-bytes); nothing was applied`,
    );
    expect((peak - before) / MiB).toBeLessThan(150);
    expect(seconds).toBeLessThan(30);
    // gzip is asked for no more than the limit and what its buffers hold, not the gigabyte.
    expect(inflatable / MiB).toBeLessThan(256);
  });

  it('refuses a layer over its compressed size, however little it expands to', async () => {
    const layer = await layerOf([{ header: { name: 'noise.yaml' }, content: randomBytes(256 * 1024) }]);
    const error = await refusal(extract(bodyOf(layer, 4096), { maxLayerBytes: 64 * 1024 }));
    expect(error.reason).toBe('ArtifactTooLarge');
    expect(error.message).toBe(
      `artifact ${artifact} has a layer larger than 64 KiB (--oci-max-layer-bytes); nothing was applied`,
    );
  });

  it('refuses 100,000 tiny entries at the file limit, having written no more than it', async () => {
    const layer = gzipSync(await emptyFilesTar(100_000, (index) => `many/${index}.yaml`));
    const error = await refusal(extract(bodyOf(layer)));
    expect(error.reason).toBe('ArtifactTooLarge');
    expect(error.message).toBe(
      `artifact ${artifact} holds more than 10000 files and directories (--oci-max-files); nothing was applied`,
    );
    expect(await readdir(join(target.target, 'many'))).toHaveLength(10_000);
  });

  it('refuses a file over the one-file limit by its header, before writing it', async () => {
    const layer = await layerOf([
      { header: { name: 'small.yaml' }, content: CONFIG },
      { header: { name: 'data/big.yaml' }, content: Buffer.alloc(10 * MiB + 1, 'a') },
    ]);
    const error = await refusal(extract(bodyOf(layer)));
    expect(error.reason).toBe('ArtifactTooLarge');
    expect(error.message).toBe(
      `artifact ${artifact} has a file "data/big.yaml" larger than 10 MiB (--oci-max-file-bytes); nothing was applied`,
    );
    expect(await readdir(target.target, { recursive: true })).toEqual(['small.yaml']);
  });

  const noise = () => layerOf([{ header: { name: 'noise.yaml' }, content: randomBytes(64 * 1024) }]);
  const tarred = () => tarOf([{ header: { name: 'a.yaml' }, content: 'x'.repeat(2000) }]);
  it.each([
    [
      'not gzip',
      async () => Buffer.from('kind: ConfigMap\n'),
      'is not a valid gzip stream (incorrect header check)',
    ],
    [
      'gzip cut in half',
      async () => (await noise()).subarray(0, 32 * 1024),
      'is not a valid gzip stream (unexpected end of file)',
    ],
    [
      'gzip with a wrong CRC-32',
      async () => {
        const layer = await noise();
        layer[layer.length - 8]! ^= 1;
        return layer;
      },
      'is not a valid gzip stream (incorrect data check)',
    ],
    [
      'a tar archive cut short',
      async () => gzipSync((await tarred()).subarray(0, 1024)),
      'is not a valid tar archive: it is cut short (it does not end with the two zero blocks that close an archive)',
    ],
    [
      'a tar header changed after its checksum',
      async () => {
        const archive = await tarred();
        archive.write('b', 0, 'latin1');
        return gzipSync(archive);
      },
      "is not a valid tar archive: a header's checksum does not match",
    ],
  ])('names what broke in a corrupt layer: %s', async (_case, layer, detail) => {
    const error = await refusal(extract(bodyOf(await layer())));
    expect(error.reason).toBe('ArtifactInvalid');
    expect(error.message).toBe(`artifact ${artifact} ${detail}; nothing was applied`);
  });

  it('stops at an abort, with its reason, and reads the body no further, even a body that hangs', async () => {
    const layer = await layerOf([{ header: { name: 'noise.yaml' }, content: randomBytes(1024 * 1024) }]);
    const controller = new AbortController();
    let reads = 0;
    let returned = false;
    async function* stalls() {
      try {
        reads += 1;
        yield layer.subarray(0, 64 * 1024);
        reads += 1;
        controller.abort(new Error('the reconcile was cancelled'));
        await new Promise(() => undefined); // the registry stops answering
      } finally {
        returned = true;
      }
    }
    await expect(extract(stalls(), {}, controller.signal)).rejects.toThrow('the reconcile was cancelled');
    expect(reads).toBe(2);
    expect(returned).toBe(false); // still stuck in its read: the extraction did not wait for it
  });

  it('stops a flowing layer at an abort and asks for no more of it', async () => {
    const controller = new AbortController();
    let reads = 0;
    async function* endless() {
      for await (const chunk of gzipLazily(zeros(64 * 1024 * MiB))) {
        reads += 1;
        if (reads === 3) controller.abort(new Error('shutting down'));
        yield chunk;
      }
    }
    const reason = await extract(endless(), { maxExpandedBytes: 1024 ** 4 }, controller.signal).catch(
      (e: unknown) => e,
    );
    expect(reason).toEqual(new Error('shutting down'));
    const readsAtAbort = reads;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads).toBe(readsAtAbort);
    expect(readsAtAbort).toBeLessThanOrEqual(4);
  });

  it('rejects at once, reading nothing, when the signal has already aborted', async () => {
    let read = false;
    async function* body() {
      read = true;
      yield new Uint8Array(0);
    }
    const reason = new Error('already over');
    await expect(extract(body(), {}, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(read).toBe(false);
  });
});
