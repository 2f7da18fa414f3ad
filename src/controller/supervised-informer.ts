import { setTimeout as delay } from 'node:timers/promises';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';

export type InformerEventType = 'added' | 'modified' | 'deleted';

export interface InformerEvent {
  readonly type: InformerEventType;
  readonly object: JsonObject;
  /** The cached object before a modification or deletion. */
  readonly previous?: JsonObject;
}

/** One watch connection: the events it delivers, and how it ended. */
export type WatchStream = (
  path: string,
  query: Readonly<Record<string, string>>,
  onEvent: (type: string, object: unknown) => void,
  signal: AbortSignal,
) => Promise<void>;

export interface InformerLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  debug(object: object, message: string): void;
}

export interface SupervisedInformerOptions {
  /** For the LIST. */
  readonly client: KubeClient;
  readonly watch: WatchStream;
  /** The collection, e.g. `/apis/applyset.dev/v1alpha1/applysets` or a namespaced one. */
  readonly path: string;
  readonly onEvent: (event: InformerEvent) => void;
  readonly logger: InformerLogger;
  /** With no event or bookmark for this long, the watch is presumed dead and restarted. Default 3 min. */
  readonly stallTimeoutMs?: number;
  /** What is kept of each object (e.g. a Secret without its data). */
  readonly transform?: (object: JsonObject) => JsonObject;
  readonly signal: AbortSignal;
}

export interface SupervisedInformer {
  /** True once the first LIST has been delivered. */
  hasSynced(): boolean;
  /** Resolves when the first LIST has been delivered. */
  readonly synced: Promise<void>;
  /** The cached objects. */
  list(): JsonObject[];
  /** Resolves when the informer has stopped (its signal was aborted). */
  readonly done: Promise<void>;
}

class WatchExpiredError extends Error {
  override readonly name = 'WatchExpiredError';
  readonly code = 'WATCH_EXPIRED';
  readonly intent = 'retryable';
}

class WatchStalledError extends Error {
  override readonly name = 'WatchStalledError';
  readonly code = 'WATCH_STALLED';
  readonly intent = 'retryable';
}

const MAX_RETRY_MS = 30_000;

/**
 * LIST then WATCH from the list's resourceVersion, kept alive whatever happens, as client-go's Reflector
 * does: a watch that ends normally (the server's timeoutSeconds) resumes from the last resourceVersion
 * seen (events and bookmarks advance it); 410 Gone means our version left the server's window, so we
 * LIST again and report the difference as events; a watch that neither delivers nor ends within
 * `stallTimeoutMs` (a half-open connection) is abandoned and restarted; other failures back off.
 */
export function startSupervisedInformer(options: SupervisedInformerOptions): SupervisedInformer {
  const cache = new Map<string, JsonObject>();
  const stallTimeoutMs = options.stallTimeoutMs ?? 3 * 60_000;
  const transform = options.transform ?? ((object: JsonObject) => object);
  const { logger, signal } = options;
  let synced = false;
  let markSynced!: () => void;
  const syncedPromise = new Promise<void>((resolve) => {
    markSynced = resolve;
  });

  const relist = async (): Promise<string> => {
    const list = await options.client.request({ method: 'GET', path: options.path, signal });
    if (!isJsonObject(list)) throw new Error(`LIST ${options.path}: not an object`);
    const items = (Array.isArray(list['items']) ? list['items'] : []).filter(isJsonObject).map(transform);
    const seen = new Set<string>();
    for (const item of items) {
      const key = keyOf(item);
      seen.add(key);
      const previous = cache.get(key);
      cache.set(key, item);
      if (previous === undefined) options.onEvent({ type: 'added', object: item });
      else if (resourceVersionOf(previous) !== resourceVersionOf(item))
        options.onEvent({ type: 'modified', object: item, previous });
    }
    for (const [key, previous] of [...cache]) {
      if (seen.has(key)) continue;
      cache.delete(key);
      options.onEvent({ type: 'deleted', object: previous, previous });
    }
    const metadata = list['metadata'];
    const version = isJsonObject(metadata) ? metadata['resourceVersion'] : undefined;
    if (typeof version !== 'string') throw new Error(`LIST ${options.path}: no resourceVersion`);
    return version;
  };

  /** One watch from `version`; resolves with the last version seen when the server ends it. */
  const watchOnce = async (version: string): Promise<string> => {
    let current = version;
    const connection = new AbortController();
    const both = AbortSignal.any([signal, connection.signal]);
    let stalled = false;
    let expired = false;
    let watchdog: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        stalled = true;
        connection.abort(new WatchStalledError(`no watch event for ${stallTimeoutMs} ms`));
      }, stallTimeoutMs);
    };
    arm();
    // The server closes the watch after timeoutSeconds; spread them so watchers do not reconnect at once.
    const timeoutSeconds = String(300 + Math.floor(Math.random() * 300));
    try {
      await options.watch(
        options.path,
        { resourceVersion: current, allowWatchBookmarks: 'true', timeoutSeconds },
        (type, raw) => {
          arm();
          if (!isJsonObject(raw)) return;
          if (type === 'ERROR') {
            if (raw['code'] === 410) {
              expired = true;
              connection.abort(new WatchExpiredError(String(raw['message'] ?? '410 Gone')));
            } else {
              logger.warn({ path: options.path, status: raw }, 'watch error event');
            }
            return;
          }
          const object = transform(raw);
          const rv = resourceVersionOf(object);
          if (rv !== undefined) current = rv;
          if (type === 'BOOKMARK') return;
          const key = keyOf(object);
          const previous = cache.get(key);
          if (type === 'DELETED') {
            cache.delete(key);
            options.onEvent({ type: 'deleted', object, ...(previous === undefined ? {} : { previous }) });
            return;
          }
          cache.set(key, object);
          options.onEvent(
            previous === undefined ? { type: 'added', object } : { type: 'modified', object, previous },
          );
        },
        both,
      );
    } finally {
      clearTimeout(watchdog);
    }
    if (expired) throw new WatchExpiredError('resourceVersion too old');
    if (stalled) throw new WatchStalledError(`no watch event for ${stallTimeoutMs} ms`);
    return current;
  };

  const loop = async () => {
    let failures = 0;
    while (!signal.aborted) {
      try {
        let version = await relist();
        if (!synced) {
          synced = true;
          markSynced();
        }
        failures = 0;
        while (!signal.aborted) {
          try {
            version = await watchOnce(version);
            failures = 0;
          } catch (error) {
            if (signal.aborted) return;
            if (error instanceof WatchExpiredError) {
              logger.info({ path: options.path }, 'watch expired (410 Gone); listing again');
              break;
            }
            if (error instanceof WatchStalledError) {
              logger.warn({ path: options.path }, 'watch stalled; restarting it');
              continue;
            }
            failures += 1;
            logger.warn({ path: options.path, err: error }, 'watch failed; retrying');
            await delay(retryDelay(failures), undefined, { signal });
            // After repeated failures our version may be long gone: start over with a LIST.
            if (failures >= 3) break;
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        logger.warn({ path: options.path, err: error }, 'list failed; retrying');
        await delay(retryDelay(failures), undefined, { signal }).catch(() => undefined);
      }
    }
  };

  const done = loop().catch((error: unknown) => {
    if (!signal.aborted) logger.warn({ path: options.path, err: error }, 'informer stopped');
  });

  return {
    hasSynced: () => synced,
    synced: syncedPromise,
    list: () => [...cache.values()],
    done,
  };
}

/** A WatchStream over client-node's Watch, which streams the response line by line. */
export function clientNodeWatchStream(kubeConfig: KubeConfig): WatchStream {
  const watcher = new Watch(kubeConfig);
  return (path, query, onEvent, signal) =>
    new Promise<void>((resolve, reject) => {
      signal.throwIfAborted();
      let controller: AbortController | undefined;
      const onAbort = () => {
        controller?.abort();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      watcher
        .watch(path, query, onEvent, (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) reject(signal.reason);
          else if (error === null || error === undefined) resolve();
          else reject(error);
        })
        .then(
          (started) => {
            controller = started;
            if (signal.aborted) started.abort();
          },
          (error: unknown) => reject(error),
        );
    });
}

function retryDelay(failures: number): number {
  return Math.min(MAX_RETRY_MS, 500 * 2 ** Math.min(failures, 10)) * (0.5 + Math.random() / 2);
}

function keyOf(object: JsonObject): string {
  const metadata = object['metadata'];
  if (!isJsonObject(metadata)) return '/';
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  return `${namespace}/${String(metadata['name'])}`;
}

function resourceVersionOf(object: JsonObject): string | undefined {
  const metadata = object['metadata'];
  if (!isJsonObject(metadata)) return undefined;
  const version = metadata['resourceVersion'];
  return typeof version === 'string' ? version : undefined;
}
