import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { hasErrorCode } from './has-error-code.js';
import type { KeyedReadWriteLock } from './keyed-read-write-lock.js';

/**
 * The Git cache's room on disk (the chart's emptyDir is 1Gi, and a pod over its sizeLimit is evicted):
 * a repository past `maxRepositoryBytes` starts over at its next fetch (one fetch is bounded by
 * `--git-max-fetch-bytes`), and past `maxBytes` in total the repositories used least recently are
 * removed, each under its own write lock, so never under a read or a fetch of it.
 */
export interface GitCacheBudgetOptions {
  /** Holds one directory per repository (see repositoryCachePaths). */
  readonly cacheDir: string;
  /** All repositories together (`--git-cache-max-bytes`). */
  readonly maxBytes: number;
  /** One repository, checked before each fetch of it (`--git-cache-max-repository-bytes`). */
  readonly maxRepositoryBytes: number;
  /** The source's repository locks. */
  readonly lock: KeyedReadWriteLock;
  /** Called under the repository's write lock once its directory is gone. */
  readonly onRemoved?: (key: string) => void;
}

export const DEFAULT_GIT_CACHE_MAX_BYTES = 768 * 1024 * 1024;
export const DEFAULT_GIT_CACHE_MAX_REPOSITORY_BYTES = 256 * 1024 * 1024;

/**
 * The repositories to remove, oldest first, so that what stays fits in `maxBytes`; `keep` (the one just
 * fetched, about to be read) is never chosen. `entries` are in order of use, least recent first.
 * @internal test seam: a pure step its unit test runs alone
 */
export function chooseEvictions(
  entries: readonly (readonly [key: string, bytes: number])[],
  maxBytes: number,
  keep: string,
): string[] {
  let total = entries.reduce((sum, [, bytes]) => sum + bytes, 0);
  const chosen: string[] = [];
  for (const [key, bytes] of entries) {
    if (total <= maxBytes) break;
    if (key === keep) continue;
    chosen.push(key);
    total -= bytes;
  }
  return chosen;
}

export class GitCacheBudget {
  readonly #options: GitCacheBudgetOptions;
  /** Bytes on disk by repository key, least recently used first (a Map keeps insertion order). */
  readonly #sizes = new Map<string, number>();
  #scanned: Promise<void> | undefined;

  constructor(options: GitCacheBudgetOptions) {
    this.#options = options;
  }

  /** A read or fetch of `key`: it becomes the most recently used. */
  touch(key: string): void {
    const bytes = this.#sizes.get(key);
    if (bytes === undefined) return;
    this.#sizes.delete(key);
    this.#sizes.set(key, bytes);
  }

  /** Before a fetch, under its write lock: a repository over its own bound starts over. */
  async beforeFetch(key: string): Promise<void> {
    const bytes = this.#sizes.get(key) ?? 0;
    if (bytes <= this.#options.maxRepositoryBytes) return;
    await rm(this.#root(key), { recursive: true, force: true });
    this.#sizes.delete(key);
    this.#options.onRemoved?.(key);
  }

  /** After a fetch, under its write lock: what the repository weighs now. */
  async afterFetch(key: string): Promise<void> {
    const bytes = await directoryBytes(this.#root(key));
    this.#sizes.delete(key);
    this.#sizes.set(key, bytes);
  }

  /**
   * Removes the repositories used least recently until the cache fits, except `keep`. Called with no
   * lock held (waiting for another repository's lock while holding one could deadlock).
   */
  async evict(keep: string): Promise<void> {
    this.#scanned ??= this.#scanExisting();
    await this.#scanned;
    for (const victim of chooseEvictions([...this.#sizes], this.#options.maxBytes, keep)) {
      await this.#options.lock.run(victim, 'write', async () => {
        // Used again, or already removed, while the lock was awaited: the next eviction decides.
        if (!chooseEvictions([...this.#sizes], this.#options.maxBytes, keep).includes(victim)) return;
        await rm(this.#root(victim), { recursive: true, force: true });
        this.#sizes.delete(victim);
        this.#options.onRemoved?.(victim);
      });
    }
  }

  /** Repositories a previous process left (an emptyDir outlives a container restart), as the oldest. */
  async #scanExisting(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.#options.cacheDir);
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT')) return;
      throw error;
    }
    const found = new Map<string, number>();
    for (const name of names) {
      // A dot name is not a repository (the OCI artifacts' directory, a lock): not the budget's.
      if (name.startsWith('.')) continue;
      if (!this.#sizes.has(name)) found.set(name, await directoryBytes(this.#root(name)));
    }
    const known = [...this.#sizes];
    this.#sizes.clear();
    for (const [key, bytes] of [...found, ...known]) this.#sizes.set(key, bytes);
  }

  #root(key: string): string {
    return path.join(this.#options.cacheDir, key);
  }
}

/** The bytes of the files under `dir` (links not followed); 0 when it is gone. */
async function directoryBytes(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir, { recursive: true });
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT') || hasErrorCode(error, 'ENOTDIR')) return 0;
    throw error;
  }
  let total = 0;
  for (const name of names) {
    // A file removed under us (a fetch starting over) counts as nothing.
    const entry = await stat(path.join(dir, name)).catch(() => undefined);
    if (entry?.isFile() === true) total += entry.size;
  }
  return total;
}
