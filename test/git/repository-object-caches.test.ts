import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParsedTree } from '../../src/git/commit-tree-view.js';
import { createBoundedTreeCache, RepositoryObjectCaches } from '../../src/git/repository-object-caches.js';

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
  const tree = (names: readonly string[]): ParsedTree => {
    const entries = names.map((name) => ({ name, kind: 'file' as const, oid: '0'.repeat(40) }));
    return { entries, byName: new Map(entries.map((entry) => [entry.name, entry])) };
  };

  it('keeps trees until they hold the bound of entries, then takes no more', () => {
    const cache = createBoundedTreeCache(3);
    cache.set('t1', tree(['a', 'b']));
    cache.set('t2', tree(['c', 'd']));
    cache.set('t3', tree(['e']));
    expect(cache.get('t1')?.entries).toHaveLength(2);
    expect(cache.get('t2')).toBeUndefined();
    expect(cache.get('t3')?.entries).toHaveLength(1);
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
