import { IntentError } from '../errors/intent-error.js';
import type { JsonObject } from '../manifests/json-value.js';
import { isJsonObject } from '../manifests/json-value.js';
import { resourceVersionOf } from './informer-cache.js';
import type { KubeClient } from './kube-client.js';

/** 410 Gone: our resourceVersion left the server's window; only a new LIST can continue. */
export interface InformerLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  debug(object: object, message: string): void;
}

export class WatchExpiredError extends IntentError {
  override readonly name = 'WatchExpiredError';
  readonly code = 'WATCH_EXPIRED';
  readonly intent = 'retryable';
  readonly reason = 'WatchExpired';
}

/** No event, not even a bookmark, within the stall timeout: a half-open connection, presumed dead. */
export class WatchStalledError extends IntentError {
  override readonly name = 'WatchStalledError';
  readonly code = 'WATCH_STALLED';
  readonly intent = 'retryable';
  readonly reason = 'WatchStalled';
}

export interface WatchOnceOptions {
  readonly watch: KubeClient['watch'];
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly signal: AbortSignal;
  readonly stallTimeoutMs: number;
  readonly transform: (object: JsonObject) => JsonObject;
  readonly logger: InformerLogger;
  /** The transformed object of an event that is not an error or a bookmark, with its type. */
  readonly onObject: (type: string, object: JsonObject) => void;
}

/**
 * One watch from `version`; resolves with the last version seen (events and bookmarks advance it)
 * when the server ends it. Throws WatchExpiredError on 410 Gone and WatchStalledError when the
 * connection stays silent for `stallTimeoutMs`.
 */
export async function watchOnce(options: WatchOnceOptions, version: string): Promise<string> {
  const { path, stallTimeoutMs, logger } = options;
  let current = version;
  const connection = new AbortController();
  const both = AbortSignal.any([options.signal, connection.signal]);
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
    await options.watch({
      path,
      query: {
        resourceVersion: current,
        allowWatchBookmarks: 'true',
        timeoutSeconds,
        ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
        ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
      },
      onEvent: (type, raw) => {
        arm();
        if (!isJsonObject(raw)) return;
        if (type === 'ERROR') {
          if (raw['code'] === 410) {
            expired = true;
            connection.abort(new WatchExpiredError(String(raw['message'] ?? '410 Gone')));
          } else {
            logger.warn({ path, status: raw }, 'watch error event');
          }
          return;
        }
        const object = options.transform(raw);
        const rv = resourceVersionOf(object);
        if (rv !== undefined) current = rv;
        if (type === 'BOOKMARK') return;
        options.onObject(type, object);
      },
      signal: both,
    });
  } finally {
    clearTimeout(watchdog);
  }
  if (expired) throw new WatchExpiredError('resourceVersion too old');
  if (stalled) throw new WatchStalledError(`no watch event for ${stallTimeoutMs} ms`);
  return current;
}
