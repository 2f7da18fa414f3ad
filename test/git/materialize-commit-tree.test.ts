/**
 * materializeCommitTree on trees built object by object (an in-memory object store stands in for the
 * repository): what it writes to disk, and what it refuses, for links, submodules and sizes.
 */
import { mkdtemp, readFile, readdir, rm, lstat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCommitTreeView, type GitObjectReader } from '../../src/git/commit-tree-view.js';
import { GitUnsafeTreeError } from '../../src/git/git-error.js';
import { materializeCommitTree, MaterializeLimitError } from '../../src/git/materialize-commit-tree.js';

function memoryStore() {
  const objects = new Map<string, { type: string; content: Uint8Array }>();
  const put = (type: string, content: Uint8Array | string): string => {
    const oid = (objects.size + 1).toString(16).padStart(40, '0');
    objects.set(oid, { type, content: typeof content === 'string' ? Buffer.from(content) : content });
    return oid;
  };
  const reader: GitObjectReader = {
    read: async (oid) => {
      const object = objects.get(oid);
      if (object === undefined) throw new Error(`no object ${oid}`);
      return object;
    },
  };
  return { put, reader };
}

const entry = (mode: string, name: string, oid: string) =>
  Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')]);

describe('materializeCommitTree', () => {
  let into: string;
  beforeEach(async () => {
    into = path.join(await mkdtemp(path.join(os.tmpdir(), 'materialize-')), 'repo');
  });
  afterEach(() => rm(path.dirname(into), { recursive: true, force: true }));

  const materialize = (store: ReturnType<typeof memoryStore>, tree: string, options = {}) =>
    materializeCommitTree({
      view: createCommitTreeView({ reader: store.reader, tree }),
      tree,
      into,
      ...options,
    }).catch((error: unknown) => error);

  it('writes files, links as copies of their targets, submodules as empty directories, and no link at all', async () => {
    const store = memoryStore();
    const { put } = store;
    const base = put('tree', entry('100644', 'cm.yaml', put('blob', 'kind: ConfigMap\n')));
    const root = put(
      'tree',
      Buffer.concat([
        entry('40000', 'base', base),
        entry('120000', 'copy.yaml', put('blob', 'base/cm.yaml')),
        entry('120000', 'gone', put('blob', 'nothing/here')),
        entry('120000', 'shared', put('blob', 'base')),
        entry('160000', 'vendor', '0123456789abcdef0123456789abcdef01234567'),
      ]),
    );
    // Written as they are in Git: a build decrypts afterwards, and only the files it reads.
    expect(await materialize(store, root)).toBeUndefined();
    expect((await readdir(into)).sort()).toEqual(['base', 'copy.yaml', 'shared', 'vendor']);
    expect(await readFile(path.join(into, 'copy.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
    expect(await readFile(path.join(into, 'shared/cm.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
    for (const name of ['copy.yaml', 'shared', 'shared/cm.yaml']) {
      expect((await lstat(path.join(into, name))).isSymbolicLink()).toBe(false);
    }
    expect(await readdir(path.join(into, 'vendor'))).toEqual([]);
  });

  it('follows links into a directory of many entries, found by name as in a small one', async () => {
    const store = memoryStore();
    const { put } = store;
    const names = Array.from({ length: 40 }, (_, index) => `cm-${String(index).padStart(2, '0')}.yaml`);
    const many = put(
      'tree',
      Buffer.concat(names.map((name) => entry('100644', name, put('blob', `name: ${name}\n`)))),
    );
    const root = put(
      'tree',
      Buffer.concat([
        entry('120000', 'first.yaml', put('blob', 'many/cm-00.yaml')),
        entry('120000', 'last.yaml', put('blob', 'many/cm-39.yaml')),
        entry('120000', 'missing', put('blob', 'many/cm-40.yaml')),
        entry('40000', 'many', many),
      ]),
    );
    expect(await materialize(store, root)).toBeUndefined();
    expect(await readFile(path.join(into, 'first.yaml'), 'utf8')).toBe('name: cm-00.yaml\n');
    expect(await readFile(path.join(into, 'last.yaml'), 'utf8')).toBe('name: cm-39.yaml\n');
    expect((await readdir(into)).sort()).toEqual(['first.yaml', 'last.yaml', 'many']);
    expect(await readdir(path.join(into, 'many'))).toHaveLength(40);
  });

  it('refuses a link to a directory it is itself inside, whose copy would never end', async () => {
    const store = memoryStore();
    const { put } = store;
    const base = put('tree', entry('120000', 'again', put('blob', '.')));
    const error = await materialize(store, put('tree', entry('40000', 'base', base)));
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect((error as Error).message).toBe(
      'unsafe repository: entry "base/again" is a link to a directory it is itself inside (a loop)',
    );
  });

  it('refuses a link that leaves the repository, as the plain reader does', async () => {
    const store = memoryStore();
    const { put } = store;
    const error = await materialize(
      store,
      put('tree', entry('120000', 'passwd', put('blob', '/etc/passwd'))),
    );
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
  });

  it('refuses a file over the per-file limit, and a tree over the total, naming the file', async () => {
    const store = memoryStore();
    const { put } = store;
    const root = put(
      'tree',
      Buffer.concat([
        entry('100644', 'a.bin', put('blob', 'x'.repeat(60))),
        entry('100644', 'b.bin', put('blob', 'y'.repeat(60))),
      ]),
    );
    const tooLarge = await materialize(store, root, { limits: { maxFileBytes: 50 } });
    expect(tooLarge).toBeInstanceOf(MaterializeLimitError);
    expect((tooLarge as Error).message).toMatch(/^a\.bin: the file is 60 bytes, over the limit of 50 bytes/);
    await rm(into, { recursive: true, force: true });
    const overTotal = await materialize(store, root, { limits: { maxSetBytes: 100 } });
    expect((overTotal as Error).message).toMatch(/^b\.bin: the files of the set reach 120 bytes/);
  });
});
