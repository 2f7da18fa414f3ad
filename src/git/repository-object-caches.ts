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
import { LruMap } from '../kube/lru-map.js';
import { SMALL_TREE_ENTRIES, type ParsedTree, type ParsedTreeCache } from './commit-tree-view.js';
import { hasErrorCode } from './has-error-code.js';
import { createPackObjectStore, type PackObjectStore } from './pack-object-store.js';
import { createPackReadFs, type PackReadFs } from './pack-read-fs.js';

/** What the shared caches may hold, counted as the packs' size on disk. */
const DEFAULT_OBJECT_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * What the inflated objects kept across fetches may weigh together, each with its entry's overhead. What
 * it saves is the objects many reads share: the commit, the trees above the sets' paths, the bases a
 * fleet's kustomizations or files have in common, read by one set after another and so never the least
 * recently used. A set's own files are read once per run in full, and a fleet at rest runs none (steady
 * runs, docs/architecture.md#steady-runs). 10,000 ApplySets of Flux's 4-object app weigh 14.9 MiB here,
 * which the 24 MiB this was kept whole for no run to read again; reading a set's files from the pack
 * again costs a run in full (a new commit, a set with `spec.decryption`) about 0.25 ms, under 2% of its
 * CPU (docs/performance.md).
 */
const DEFAULT_CONTENT_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * An object larger than this is inflated again on each read rather than crowd the others out.
 * @internal test seam: the limit its tests assert against
 */
export const MAX_CACHED_CONTENT_BYTES = 256 * 1024;

/** An inflated Git object: its type and its content (without the object header). */
export interface GitObjectContent {
  readonly type: string;
  readonly content: Uint8Array;
}

/** Inflated objects of one repository, by oid. */
interface ObjectContentCache {
  get(oid: string): GitObjectContent | undefined;
  set(oid: string, object: GitObjectContent): void;
}

/**
 * What reads of one repository share: isomorphic-git's cache of its packs, the file system answers it
 * asks for on each object (see createPackReadFs), its parsed trees (all until the next fetch), and its
 * inflated objects (across fetches).
 */
export interface RepositoryReadCache {
  /** The packs' objects, read by the controller (createPackObjectStore). */
  readonly packs: PackObjectStore;
  /** isomorphic-git's cache, for what the packs do not answer (loose objects). */
  readonly objects: object;
  readonly fs: PackReadFs;
  readonly trees: ParsedTreeCache;
  readonly contents: ObjectContentCache;
}

interface CachedRepository extends RepositoryReadCache {
  readonly bytes: number;
}

/**
 * Tree entries the parsed trees of one repository may hold: a pack stores trees as deltas, so parsed
 * trees can take far more memory than the pack's size the budget counts. Past the bound, further
 * trees are parsed by each read again.
 */
const MAX_CACHED_TREE_ENTRIES = 100_000;

/**
 * A tree cache of the trees that are not small (SMALL_TREE_ENTRIES), which stops taking trees once it
 * holds `maxEntries` tree entries.
 * @internal test seam: the cache its unit test fills past its bound
 */
export function createBoundedTreeCache(maxEntries = MAX_CACHED_TREE_ENTRIES): ParsedTreeCache {
  const trees = new Map<string, ParsedTree>();
  let entries = 0;
  return {
    get: (oid) => trees.get(oid),
    set(oid, tree) {
      const size = tree.entries.length;
      if (size < SMALL_TREE_ENTRIES || trees.has(oid) || entries + size > maxEntries) return;
      trees.set(oid, tree);
      entries += size;
    },
  };
}

/**
 * Inflated objects of every repository, least recently used dropped past `maxBytes`. A Git object
 * never changes under its oid, so unlike the pack caches this one outlives a fetch, even one that
 * starts the repository over: a fleet polling one repository reads the same commit, trees and files
 * on every interval, and inflated each of them from the packs again (a stat, a failed open of the
 * loose object, a listing of the packs and an inflate, per object). Each object is kept with the
 * repository it was read from, and answers that repository only, so no repository is ever answered with
 * another's object.
 *
 * At 10,000 ApplySets the cache holds 50,000 objects of a few hundred bytes, so what each entry costs
 * beside its content counts (docs/performance.md). An entry is keyed by the oid alone, the string the
 * tree entry read already holds, not a key of repository and oid made for each read, and weighed from
 * its value, not in a map of weights beside it; its content is kept as a string of one byte per
 * character, not as a Uint8Array over an ArrayBuffer of its own (about 200 bytes of objects), and
 * a read gets a Buffer of it. Two repositories holding the same object (a fork) take turns with its one
 * entry: a read of the other's is a miss, as it was before the cache.
 * @internal test seam: the cache its unit test fills past its bound
 */
export class ObjectContents {
  readonly #entries: LruMap<string, KeptObject>;

  constructor(maxBytes = DEFAULT_CONTENT_CACHE_BYTES) {
    // Weighed by content, with about a hundred bytes for the entry's own objects; the entry count
    // bounds only the overhead of many tiny objects.
    this.#entries = new LruMap(1_000_000, {
      maxWeight: maxBytes,
      weigh: (kept) => kept.bytes.length + 128,
    });
  }

  /** The objects of the repository with `repositoryKey`. */
  of(repositoryKey: string): ObjectContentCache {
    return {
      get: (oid) => {
        const kept = this.#entries.get(oid);
        if (kept?.repository !== repositoryKey) return undefined;
        return { type: kept.type, content: Buffer.from(kept.bytes, 'latin1') };
      },
      set: (oid, { type, content }) => {
        if (content.byteLength > MAX_CACHED_CONTENT_BYTES) return;
        const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1');
        this.#entries.set(oid, { type, bytes, repository: repositoryKey });
      },
    };
  }
}

/** An inflated object as the cache keeps it, with the key of the repository it was read from. */
interface KeptObject {
  readonly type: string;
  /** The content, a character per byte (latin1): the same bytes, in a string the heap holds compactly. */
  readonly bytes: string;
  readonly repository: string;
}

export class RepositoryObjectCaches {
  readonly #entries = new Map<string, CachedRepository>();
  readonly #budgetBytes: number;
  readonly #contents = new ObjectContents();
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
    const made: CachedRepository = {
      packs: createPackObjectStore(gitdir),
      objects: {},
      fs: createPackReadFs(gitdir),
      trees: createBoundedTreeCache(),
      contents: this.#contents.of(key),
      bytes,
    };
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

  /**
   * Forgets the repository's pack caches and parsed trees: a fetch is about to change its packs (or
   * start it over). Its inflated objects stay: an oid names the same object whatever the packs.
   */
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
