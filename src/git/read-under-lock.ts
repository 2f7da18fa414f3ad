import { raceSignal } from './abortable-http-client.js';
import type { GitCacheBudget } from './git-cache-budget.js';
import type { KeyedReadWriteLock } from './keyed-read-write-lock.js';
import type { CachedManifestsRequest } from './read-cached-manifests.js';
import type { RepositoryObjectCaches } from './repository-object-caches.js';

/** What a read of the Git cache shares with the source's fetches. */
interface ReadContext {
  readonly budget: GitCacheBudget;
  readonly lock: KeyedReadWriteLock;
  readonly objectCaches: RepositoryObjectCaches;
}

/**
 * `read` of one cached repository under its read lock: reads run together, between fetches, so a fetch
 * that starts the cache over never removes objects under one; they share one object cache per repository.
 */
export async function readUnderLock<T>(
  context: ReadContext,
  repository: { readonly cacheKey: string; readonly url: string; readonly gitdir: string },
  signal: AbortSignal | undefined,
  read: (opened: Omit<CachedManifestsRequest, 'commit' | 'path'>) => Promise<T>,
): Promise<T> {
  signal?.throwIfAborted();
  const { cacheKey, url, gitdir } = repository;
  context.budget.touch(cacheKey);
  const done = context.lock.run(cacheKey, 'read', async () =>
    read({
      gitdir,
      readCache: await context.objectCaches.forRead(cacheKey, gitdir),
      url,
      ...(signal === undefined ? {} : { signal }),
    }),
  );
  return signal === undefined ? done : raceSignal(done, signal);
}
