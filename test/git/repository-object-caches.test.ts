import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMALL_TREE_ENTRIES, type ParsedTree } from '../../src/git/commit-tree-view.js';
import { treeOfCommit } from '../../src/git/read-cached-manifests.js';
import {
  createBoundedTreeCache,
  MAX_CACHED_CONTENT_BYTES,
  ObjectContents,
  RepositoryObjectCaches,
} from '../../src/git/repository-object-caches.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-object-caches-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A bare repository directory whose packs add up to `bytes`. */
async function repositoryWithPacks(name: string, bytes: number): Promise<string> {
  const gitdir = join(dir, name);
  await mkdir(join(gitdir, 'objects', 'pack'), { recursive: true });
  await writeFile(join(gitdir, 'objects', 'pack', 'pack-1.pack'), Buffer.alloc(bytes));
  await writeFile(join(gitdir, 'objects', 'pack', 'pack-1.idx'), Buffer.alloc(bytes));
  return gitdir;
}

describe('createBoundedTreeCache', () => {
  const tree = (size: number): ParsedTree => ({
    entries: Array.from({ length: size }, (_, index) => ({
      name: `file-${index}`,
      kind: 'file' as const,
      oid: '0'.repeat(40),
    })),
  });

  it('keeps trees until they hold the bound of entries, then takes no more', () => {
    const cache = createBoundedTreeCache(3 * SMALL_TREE_ENTRIES);
    cache.set('t1', tree(2 * SMALL_TREE_ENTRIES));
    cache.set('t2', tree(2 * SMALL_TREE_ENTRIES));
    cache.set('t3', tree(SMALL_TREE_ENTRIES));
    expect(cache.get('t1')?.entries).toHaveLength(2 * SMALL_TREE_ENTRIES);
    expect(cache.get('t2')).toBeUndefined();
    expect(cache.get('t3')?.entries).toHaveLength(SMALL_TREE_ENTRIES);
  });

  it('keeps no small tree: one is parsed again rather than kept', () => {
    const cache = createBoundedTreeCache();
    cache.set('small', tree(SMALL_TREE_ENTRIES - 1));
    cache.set('large', tree(SMALL_TREE_ENTRIES));
    expect(cache.get('small')).toBeUndefined();
    expect(cache.get('large')?.entries).toHaveLength(SMALL_TREE_ENTRIES);
  });
});

describe('RepositoryObjectCaches', () => {
  it('gives every read of a repository the same cache until a fetch drops it', async () => {
    const caches = new RepositoryObjectCaches(1000);
    const gitdir = await repositoryWithPacks('shared', 100);
    const first = await caches.forRead('shared', gitdir);
    expect(await caches.forRead('shared', gitdir)).toBe(first);
    caches.drop('shared');
    expect(await caches.forRead('shared', gitdir)).not.toBe(first);
  });

  it('keeps the packs of the repositories read most recently within the budget, counting pack files only', async () => {
    const caches = new RepositoryObjectCaches(250);
    const a = await repositoryWithPacks('a', 100);
    const b = await repositoryWithPacks('b', 100);
    const c = await repositoryWithPacks('c', 100);
    const cacheOfA = await caches.forRead('a', a);
    await caches.forRead('b', b);
    expect(await caches.forRead('a', a)).toBe(cacheOfA);
    await caches.forRead('c', c);
    // a was used after b: b is the one that goes.
    expect(caches.size).toBe(2);
    expect(await caches.forRead('a', a)).toBe(cacheOfA);
  });

  it('reads a repository larger than the whole budget with a cache of its own each time', async () => {
    const caches = new RepositoryObjectCaches(50);
    const gitdir = await repositoryWithPacks('huge', 100);
    const first = await caches.forRead('huge', gitdir);
    expect(await caches.forRead('huge', gitdir)).not.toBe(first);
    expect(caches.size).toBe(0);
  });

  it('caches a repository that has no packs yet', async () => {
    const caches = new RepositoryObjectCaches(50);
    const gitdir = join(dir, 'empty');
    expect(await caches.forRead('empty', gitdir)).toBe(await caches.forRead('empty', gitdir));
  });
});

describe('ObjectContents', () => {
  const blob = (bytes: number, fill = 1) => ({ type: 'blob', content: new Uint8Array(bytes).fill(fill) });
  // What a read of the cache gives, as plain values: its type and bytes (the content is a Buffer of them).
  const plain = (object: { type: string; content: Uint8Array } | undefined) =>
    object === undefined ? undefined : { type: object.type, content: [...object.content] };

  it('answers a repository only with its own objects', () => {
    const contents = new ObjectContents(10_000);
    const object = blob(10);
    contents.of('a').set('oid-1', object);
    expect(plain(contents.of('a').get('oid-1'))).toEqual(plain(object));
    expect(contents.of('b').get('oid-1')).toBeUndefined();
    // The same object read from another repository (a fork) is that repository's now.
    const forked = blob(10, 2);
    contents.of('b').set('oid-1', forked);
    expect(contents.of('a').get('oid-1')).toBeUndefined();
    expect(plain(contents.of('b').get('oid-1'))).toEqual(plain(forked));
  });

  it('gives back every byte as read: all 256 values, and UTF-8 text', () => {
    const contents = new ObjectContents(10_000).of('a');
    const bytes = { type: 'blob', content: Uint8Array.from({ length: 256 }, (_, index) => index) };
    const text = { type: 'blob', content: new TextEncoder().encode('name: grüße-€-🚀\n') };
    contents.set('bytes', bytes);
    contents.set('text', text);
    expect(plain(contents.get('bytes'))).toEqual(plain(bytes));
    expect(new TextDecoder().decode(contents.get('text')?.content)).toBe('name: grüße-€-🚀\n');
  });

  it('keeps the objects read most recently within the byte bound', () => {
    // Three objects of 1,000 bytes (and their overhead) do not fit in 2,500 bytes: the oldest goes.
    const contents = new ObjectContents(2_500).of('a');
    contents.set('1', blob(1000));
    contents.set('2', blob(1000));
    expect(contents.get('1')).toBeDefined();
    contents.set('3', blob(1000));
    expect(contents.get('2')).toBeUndefined();
    expect(contents.get('1')).toBeDefined();
    expect(contents.get('3')).toBeDefined();
  });

  it('does not keep an object larger than MAX_CACHED_CONTENT_BYTES', () => {
    const contents = new ObjectContents(10 * MAX_CACHED_CONTENT_BYTES).of('a');
    contents.set('big', blob(MAX_CACHED_CONTENT_BYTES + 1));
    contents.set('fits', blob(MAX_CACHED_CONTENT_BYTES));
    expect(contents.get('big')).toBeUndefined();
    expect(contents.get('fits')).toBeDefined();
  });

  it("outlives a fetch's drop of the repository's pack caches", async () => {
    const caches = new RepositoryObjectCaches(1000);
    const gitdir = await repositoryWithPacks('kept', 100);
    const object = blob(10);
    (await caches.forRead('kept', gitdir)).contents.set('oid-1', object);
    caches.drop('kept');
    const next = await caches.forRead('kept', gitdir);
    expect(plain(next.contents.get('oid-1'))).toEqual(plain(object));
    expect((await caches.forRead('other', gitdir)).contents.get('oid-1')).toBeUndefined();
  });
});

describe('treeOfCommit', () => {
  const tree = 'a'.repeat(40);
  const encode = (text: string) => new TextEncoder().encode(text);

  it("reads the commit's first line", () => {
    expect(treeOfCommit(encode(`tree ${tree}\nparent ${'b'.repeat(40)}\nauthor x\n\nmessage\n`))).toBe(tree);
  });

  it('reads only the bytes of the object, not the buffer around it', () => {
    const around = encode(`tree ${tree}\ntree ${'c'.repeat(40)}\n`);
    expect(treeOfCommit(around.subarray(0, 20))).toBeUndefined();
    expect(treeOfCommit(around.subarray(46))).toBe('c'.repeat(40));
  });

  it('refuses what does not start with a tree line', () => {
    expect(treeOfCommit(encode(`object ${tree}\ntype commit\n`))).toBeUndefined();
    expect(treeOfCommit(encode(`tree ${tree.toUpperCase()}\n`))).toBeUndefined();
    expect(treeOfCommit(encode(''))).toBeUndefined();
  });
});
