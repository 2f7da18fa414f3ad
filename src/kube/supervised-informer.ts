import { setTimeout as delay } from 'node:timers/promises';
import { KubeApiError } from './kube-api-error.js';
import type { KubeClient } from './kube-client.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { createInformerCache, type InformerEvent } from './informer-cache.js';
import {
  afterWatchFailure,
  informerRetryDelayMs,
  isShortWatch,
  missingCollectionJudge,
} from './informer-backoff.js';
import {
  WatchExpiredError,
  WatchStalledError,
  watchOnce,
  type InformerLogger,
  type WatchOnceOptions,
} from './watch-once.js';

export interface SupervisedInformerOptions {
  /** For the LIST and the WATCH. */
  readonly client: KubeClient;
  /** The collection, e.g. `/apis/applyset.dev/v1alpha1/applysets` or a namespaced one. */
  readonly path: string;
  /**
   * Only the objects this label selector matches, in the LIST and the WATCH (a shard's ApplySets). An
   * object whose labels stop matching is reported deleted, as the server's watch reports it.
   */
  readonly labelSelector?: string;
  /** Only the objects this field selector matches (the Events about ApplySets), as labelSelector. */
  readonly fieldSelector?: string;
  readonly onEvent: (event: InformerEvent) => void;
  readonly logger: InformerLogger;
  /**
   * A watch the server has not ended this long past its `timeoutSeconds` is presumed dead (a half-open
   * connection) and restarted from the version it delivered last. Default 1 min.
   */
  readonly stallTimeoutMs?: number;
  /** The `timeoutSeconds` of each watch; default a random 300-600 s (watchOnce). */
  readonly watchTimeoutSeconds?: number;
  /** What is kept of each object (e.g. a Secret without its data). */
  readonly transform?: (object: JsonObject) => JsonObject;
  /**
   * A LIST answered 404 (the CRD is not installed) or 403 (no right to list it) counts as an empty,
   * synced list, listed again every MISSING_RELIST_MS (a CRD installed later is seen then), instead of
   * a failure retried with backoff while `synced` waits. A collection the informer held must answer so
   * a few times in a row first (missingCollectionJudge: an API server starting up answers so briefly).
   */
  readonly missingAsEmpty?: boolean;
  /**
   * Each LIST asked in pages of this many objects (`limit` and `continue`, as client-go's Reflector
   * pages), so that an answer holds at most this many objects before `transform` shrinks them;
   * default one LIST for the whole collection.
   */
  readonly pageSize?: number;
  /**
   * Ask the LIST and the WATCH for each object's metadata alone (`PartialObjectMetadata`, as
   * client-go's metadata informers do), so that neither the bytes received nor the objects parsed
   * hold a spec, a status or data the informer would drop anyway. A server that cannot answer so sends
   * whole objects (the Accept header lists plain JSON after it).
   */
  readonly metadataOnly?: boolean;
  /**
   * Asked of every failed LIST and WATCH: true stops the informer for good (its `done` resolves),
   * instead of retrying with backoff (a collection its user may not list or watch, for a watch that is
   * only an optimisation).
   */
  readonly giveUp?: (error: unknown) => boolean;
  readonly signal: AbortSignal;
}

export interface SupervisedInformer {
  /** True once the first LIST has been delivered. */
  hasSynced(): boolean;
  /** Resolves when the first LIST has been delivered. */
  readonly synced: Promise<void>;
  /** The cached objects. */
  list(): JsonObject[];
  /** The cached object with key `namespace/name` (`name` alone for a cluster-scoped one: `/name`). */
  get(key: string): JsonObject | undefined;
  /**
   * Whether a watch is open now: the server accepted it and it has not ended or failed since, so the
   * cache hears of changes as they are made. False while the server is away or the cache is relisting.
   */
  isWatching(): boolean;
  /** Resolves when the informer has stopped (its signal was aborted). */
  readonly done: Promise<void>;
}

/** How often a collection that is missing (missingAsEmpty) is listed again. */
const MISSING_RELIST_MS = 60_000;

/** The Accept headers of a metadataOnly informer's LIST and WATCH (meta.k8s.io/v1, Kubernetes 1.15 on). */
const METADATA_ONLY = {
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json',
  watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json',
} as const;

/** The Accept header of the informer's LIST or WATCH: metadata alone when asked, else the default. */
function acceptOf(options: SupervisedInformerOptions, what: 'list' | 'watch'): { accept?: string } {
  return options.metadataOnly === true ? { accept: METADATA_ONLY[what] } : {};
}

/**
 * LIST then WATCH from the list's resourceVersion, kept alive whatever happens, as client-go's Reflector
 * does: a watch that ends normally (the server's timeoutSeconds) resumes from the last resourceVersion
 * seen (events and bookmarks advance it); 410 Gone means our version left the server's window, so we
 * LIST again and report the difference as events; a watch the server has not ended `stallTimeoutMs`
 * past its timeoutSeconds (a half-open connection) is abandoned and restarted; other failures back off, 0.5 s
 * doubling to 30 s with jitter (informer-backoff.ts). An API server that is away (restarting) is
 * watched again from the same version, not listed: when it is back, one WATCH, or one LIST if it no
 * longer has that version (docs/operations.md, "Restarts").
 */
export function startSupervisedInformer(options: SupervisedInformerOptions): SupervisedInformer {
  const transform = options.transform ?? ((object: JsonObject) => object);
  const { logger, signal } = options;
  const cache = createInformerCache(options.onEvent);
  let watching = false;
  const selectors = {
    ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
    ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
  };
  const watchAccept = acceptOf(options, 'watch');
  const watch: WatchOnceOptions = {
    watch: (request) => options.client.watch({ ...request, ...watchAccept }),
    path: options.path,
    ...selectors,
    signal,
    stallTimeoutMs: options.stallTimeoutMs ?? 60_000,
    ...(options.watchTimeoutSeconds === undefined ? {} : { timeoutSeconds: options.watchTimeoutSeconds }),
    transform,
    logger,
    onObject: (type, object) => cache.applyWatchEvent(type, object),
    onWatching: (open) => {
      watching = open;
    },
  };
  let synced = false;
  let markSynced!: () => void;
  const syncedPromise = new Promise<void>((resolve) => (markSynced = resolve));

  const judge = missingCollectionJudge();
  /** LIST into the cache; the list's resourceVersion, to watch from (undefined: the collection is missing). */
  const relist = async (): Promise<string | undefined> => {
    let pages;
    try {
      const how = { ...options, transform, ...acceptOf(options, 'list') };
      pages = await listPages(options.client, options.path, selectors, how);
    } catch (error) {
      const missing = error instanceof KubeApiError && (error.notFound || error.status === 403);
      if (options.missingAsEmpty !== true || !missing || !judge.acceptMissing()) throw error;
      cache.replaceAll([]);
      return undefined;
    }
    judge.found();
    cache.replaceAll(pages.items);
    return pages.resourceVersion;
  };

  const loop = async () => {
    let failures = 0;
    while (!signal.aborted) {
      try {
        const version = await relist();
        if (!synced) {
          synced = true;
          markSynced();
        }
        if (version === undefined) {
          await delay(MISSING_RELIST_MS, undefined, { signal }).catch(() => undefined);
          continue;
        }
        const watched = await watchUntilRelist(watch, version, options.giveUp);
        if (watched === 'gave-up') return;
        failures = watched;
      } catch (error) {
        if (signal.aborted) return;
        if (options.giveUp?.(error) === true) return;
        failures += 1;
        logger.warn({ path: options.path, err: error }, 'list failed; retrying');
        await backOff(failures, signal);
      }
    }
  };

  const done = loop().catch((error: unknown) => {
    if (!signal.aborted) logger.warn({ path: options.path, err: error }, 'informer stopped');
  });

  return {
    hasSynced: () => synced,
    synced: syncedPromise,
    list: () => cache.list(),
    get: (key) => cache.get(key),
    isWatching: () => watching,
    done,
  };
}

/**
 * The collection's items, transformed, in pages of `pageSize` when given (each page's items shrunk by
 * `transform` before the next page is asked), and the resourceVersion of the list: the first page's,
 * the snapshot every page of one list is read from.
 */
async function listPages(
  client: KubeClient,
  path: string,
  query: Readonly<Record<string, string>>,
  how: {
    readonly pageSize?: number | undefined;
    readonly accept?: string;
    readonly transform: (object: JsonObject) => JsonObject;
    readonly signal: AbortSignal;
  },
): Promise<{ items: JsonObject[]; resourceVersion: string }> {
  const { pageSize, transform, signal, accept } = how;
  const items: JsonObject[] = [];
  let resourceVersion: string | undefined;
  let next: string | undefined;
  do {
    const page: Record<string, string> = { ...query };
    if (pageSize !== undefined) page['limit'] = String(pageSize);
    if (next !== undefined) page['continue'] = next;
    const list = await client.request({
      method: 'GET',
      path,
      signal,
      query: page,
      ...(accept === undefined ? {} : { accept }),
    });
    if (!isJsonObject(list)) throw new Error(`LIST ${path}: not an object`);
    for (const item of Array.isArray(list['items']) ? list['items'] : [])
      if (isJsonObject(item)) items.push(transform(item));
    const metadata = isJsonObject(list['metadata']) ? list['metadata'] : {};
    resourceVersion ??=
      typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : undefined;
    next =
      typeof metadata['continue'] === 'string' && metadata['continue'] !== ''
        ? metadata['continue']
        : undefined;
  } while (next !== undefined && pageSize !== undefined);
  if (resourceVersion === undefined) throw new Error(`LIST ${path}: no resourceVersion`);
  return { items, resourceVersion };
}

/**
 * Watches from `version`, resuming from the last version seen each time the server ends a watch,
 * until a new LIST is needed (afterWatchFailure: 410 Gone, or a few errors answered in a row; an
 * unreachable server is watched again from the same version, with backoff, however long it is away).
 * A stalled watch is restarted at once; one the server ends at once with nothing delivered is backed
 * off as a failure. Returns the failures counted, which the next LIST's backoff continues from, or
 * 'gave-up' when giveUp said so of a failure.
 */
async function watchUntilRelist(
  options: WatchOnceOptions,
  version: string,
  giveUp: SupervisedInformerOptions['giveUp'],
): Promise<number | 'gave-up'> {
  const { signal, logger, path } = options;
  let failures = 0;
  let current = version;
  while (!signal.aborted) {
    const began = Date.now();
    try {
      const next = await watchOnce(options, current);
      const short = isShortWatch(Date.now() - began, next !== current);
      current = next;
      if (!short) {
        failures = 0;
        continue;
      }
      failures += 1;
      logger.warn({ path, failures }, 'watch failed; the server ended it at once, retrying');
    } catch (error) {
      if (signal.aborted) return failures;
      if (error instanceof WatchExpiredError) {
        logger.info({ path }, 'watch expired (410 Gone); listing again');
        break;
      }
      if (error instanceof WatchStalledError) {
        logger.warn({ path }, 'watch stalled; restarting it');
        current = error.resourceVersion ?? current;
        continue;
      }
      if (giveUp?.(error) === true) return 'gave-up';
      failures += 1;
      logger.warn({ path, err: error, failures }, 'watch failed; retrying');
      const retry = afterWatchFailure(error, failures);
      if (retry === 'relist-now') break;
      await backOff(failures, signal);
      if (retry === 'relist') break;
      continue;
    }
    await backOff(failures, signal);
  }
  return failures;
}

/** Waits informerRetryDelayMs after the `failures`-th failure in a row, or until `signal` aborts. */
function backOff(failures: number, signal: AbortSignal): Promise<void> {
  return delay(informerRetryDelayMs(failures, Math.random()), undefined, { signal }).catch(() => undefined);
}
