/**
 * isomorphic-git's object caches and the parsed trees, one set per repository, shared by the reads
 * between two fetches. Each read with caches of its own loaded every pack index and the pack again and
 * parsed the trees again (a root of a thousand directories, for each of a thousand ApplySets), which
 * was most of a reconcile's Git work for a fleet on one repository, and churned the memory by a pack's
 * size per read. A cache keeps the repository's packs in memory, so the caches together are bounded by
 * the size of those packs on disk: past the budget, the repository read least recently goes, and a
 * repository larger than the whole budget is read with a cache of its own, as before.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ParsedTree, ParsedTreeCache } from './commit-tree-view.js';
import { hasErrorCode } from './has-error-code.js';

/** What the shared caches may hold, counted as the packs' size on disk. */
export const DEFAULT_OBJECT_CACHE_BYTES = 64 * 1024 * 1024;

/** What reads of one repository share: isomorphic-git's cache of its packs, and its parsed trees. */
export interface RepositoryReadCache {
  readonly objects: object;
  readonly trees: ParsedTreeCache;
}

interface CachedRepository extends RepositoryReadCache {
  readonly bytes: number;
}

/**
 * Tree entries the parsed trees of one repository may hold: a pack stores trees as deltas, so parsed
 * trees can take far more memory than the pack's size the budget counts. Past the bound, further
 * trees are parsed by each read again.
 */
export const MAX_CACHED_TREE_ENTRIES = 100_000;

/** A tree cache that stops taking trees once it holds `maxEntries` tree entries. */
export function createBoundedTreeCache(maxEntries = MAX_CACHED_TREE_ENTRIES): ParsedTreeCache {
  const trees = new Map<string, ParsedTree>();
  let entries = 0;
  return {
    get: (oid) => trees.get(oid),
    set(oid, tree) {
      if (trees.has(oid) || entries + tree.entries.length > maxEntries) return;
      trees.set(oid, tree);
      entries += tree.entries.length;
    },
  };
}

export class RepositoryObjectCaches {
  readonly #entries = new Map<string, CachedRepository>();
  readonly #budgetBytes: number;
  #totalBytes = 0;

  constructor(budgetBytes = DEFAULT_OBJECT_CACHE_BYTES) {
    this.#budgetBytes = budgetBytes;
  }

  /** The caches for a read of `gitdir`; the caller holds the repository's read lock. */
  async forRead(key: string, gitdir: string): Promise<RepositoryReadCache> {
    const existing = this.#entries.get(key);
    if (existing !== undefined) {
      // Most recently used last: a Map iterates in insertion order.
      this.#entries.delete(key);
      this.#entries.set(key, existing);
      return existing;
    }
    const bytes = await packBytes(gitdir);
    const made: CachedRepository = { objects: {}, trees: createBoundedTreeCache(), bytes };
    if (bytes > this.#budgetBytes) return made;
    // Another read of the same repository may have made one while the packs were measured.
    const raced = this.#entries.get(key);
    if (raced !== undefined) return raced;
    this.#entries.set(key, made);
    this.#totalBytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#totalBytes <= this.#budgetBytes) break;
      this.#entries.delete(oldest);
      this.#totalBytes -= entry.bytes;
    }
    return made;
  }

  /** Forgets the repository's cache: a fetch is about to change its packs (or start it over). */
  drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#totalBytes -= entry.bytes;
  }

  /** Repositories cached now. */
  get size(): number {
    return this.#entries.size;
  }
}

/** The size of the repository's pack files; 0 when it has none yet (loose objects are read from disk). */
async function packBytes(gitdir: string): Promise<number> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  let names: string[];
  try {
    names = await readdir(packDir);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return 0;
    throw error;
  }
  let total = 0;
  for (const name of names) {
    if (!name.endsWith('.pack')) continue;
    // A pack removed under us (the cache started over) counts as nothing.
    total += await stat(path.join(packDir, name)).then(
      (entry) => entry.size,
      () => 0,
    );
  }
  return total;
}
