import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readManifestDirectory } from '../../src/source/read-manifest-directory.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/manifests');

describe('readManifestDirectory', () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'manifests-'));
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('lists yaml, yml and json files recursively in walk order, ignoring other files', async () => {
    const files = await readManifestDirectory(path.join(fixtures, 'mixed'));
    expect(files.map((file) => file.path)).toEqual([
      '00-namespace.yaml',
      'app/config.yaml',
      'app/web.json',
      'cluster-role.yml',
      'crds/widgets.yaml',
    ]);
    expect(files[0]?.text).toContain('kind: Namespace');
  });

  it('orders like filepath.Walk: a directory before a sibling file that sorts after it as a path', async () => {
    await mkdir(path.join(scratch, 'a'));
    await writeFile(path.join(scratch, 'a', 'b.yaml'), '');
    await writeFile(path.join(scratch, 'a-c.yaml'), '');
    await writeFile(path.join(scratch, 'B.yaml'), '');
    const files = await readManifestDirectory(scratch);
    expect(files.map((file) => file.path)).toEqual(['B.yaml', 'a/b.yaml', 'a-c.yaml']);
  });

  it('survives a symlink loop and follows links that stay inside the root', async () => {
    await mkdir(path.join(scratch, 'real'));
    await writeFile(path.join(scratch, 'real', 'x.yaml'), 'kind: X');
    await symlink(scratch, path.join(scratch, 'real', 'loop'));
    await symlink(path.join(scratch, 'real'), path.join(scratch, 'alias'));
    await symlink(path.join(scratch, 'real', 'x.yaml'), path.join(scratch, 'linked.yaml'));
    await symlink(path.join(scratch, 'missing.yaml'), path.join(scratch, 'dangling.yaml'));
    const files = await readManifestDirectory(scratch);
    // `alias` sorts before `real`, so the directory is read once, under the name met first.
    expect(files.map((file) => file.path)).toEqual(['alias/x.yaml', 'linked.yaml']);
  });

  it('does not follow a link that leaves the root', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'outside-'));
    try {
      await writeFile(path.join(outside, 'secret.yaml'), 'kind: Secret');
      await mkdir(path.join(scratch, 'root'));
      await symlink(outside, path.join(scratch, 'root', 'escape'));
      await symlink(path.join(outside, 'secret.yaml'), path.join(scratch, 'root', 'escape.yaml'));
      expect(await readManifestDirectory(path.join(scratch, 'root'))).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('reads a single file whatever its extension', async () => {
    await writeFile(path.join(scratch, 'manifest.txt'), 'kind: ConfigMap');
    expect(await readManifestDirectory(path.join(scratch, 'manifest.txt'))).toEqual([
      { path: 'manifest.txt', text: 'kind: ConfigMap' },
    ]);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(readManifestDirectory(scratch, { signal: controller.signal })).rejects.toThrow();
  });
});
