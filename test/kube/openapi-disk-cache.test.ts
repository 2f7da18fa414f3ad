/**
 * The OpenAPI disk cache gives back a document with the byte length of its file, which the
 * patch-metadata source weighs it by (no second serialisation of a document of MiBs to find out).
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenApiDiskCache } from '../../src/kube/openapi-disk-cache.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-openapi-disk-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createOpenApiDiskCache', () => {
  it('reads a stored document back with the byte length of its file', async () => {
    const store = createOpenApiDiskCache(dir);
    // Characters of more than one byte: the weight is in bytes, not in string length.
    const document = { paths: {}, info: { description: 'Größe – 大きさ' } };
    await store.write('https://server/openapi/v3/apis/apps/v1?hash=ABC', document);
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    const read = await store.read('https://server/openapi/v3/apis/apps/v1?hash=ABC');
    expect(read?.document).toEqual(document);
    expect(read?.bytes).toBe((await stat(join(dir, file ?? 'missing.json'))).size);
    expect(read?.bytes).toBeGreaterThan(JSON.stringify(document).length);
  });

  it('misses a key it never stored', async () => {
    await expect(createOpenApiDiskCache(dir).read('https://server/openapi/v3/api/v1?hash=X')).resolves.toBe(
      undefined,
    );
  });
});
