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

/** A watch the server did not end in time (its timeoutSeconds, and a grace): a half-open connection, presumed dead. */
export class WatchStalledError extends IntentError {
  override readonly name = 'WatchStalledError';
  readonly code = 'WATCH_STALLED';
  readonly intent = 'retryable';
  readonly reason = 'WatchStalled';

  /** @param resourceVersion The last version the watch delivered: the next one resumes from it. */
  constructor(
    message: string,
    readonly resourceVersion?: string,
  ) {
    super(message);
  }
}

export interface WatchOnceOptions {
  readonly watch: KubeClient['watch'];
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly signal: AbortSignal;
  readonly stallTimeoutMs: number;
  /** The `timeoutSeconds` asked of the server; default a random 300-600 s, so watchers do not reconnect at once. */
  readonly timeoutSeconds?: number;
  readonly transform: (object: JsonObject) => JsonObject;
  readonly logger: InformerLogger;
  /** The transformed object of an event that is not an error or a bookmark, with its type. */
  readonly onObject: (type: string, object: JsonObject) => void;
  /** Told true when the server accepted the watch, false when the watch ended or failed. */
  readonly onWatching?: (open: boolean) => void;
}

/**
 * One watch from `version`; resolves with the last version seen (events and bookmarks advance it)
 * when the server ends it, which it does after `timeoutSeconds`. Throws WatchExpiredError on 410 Gone,
 * and WatchStalledError when the server has not ended it `stallTimeoutMs` past that: a half-open
 * connection, presumed dead. Silence before then proves nothing: an API server sends a bookmark only
 * when it has a newer version to tell, so the watch of a collection nobody writes (Notifications, or
 * ApplySets at rest) delivers nothing at all until its end (docs/operations.md, "Restarts").
 */
export async function watchOnce(options: WatchOnceOptions, version: string): Promise<string> {
  const { path, stallTimeoutMs, logger } = options;
  let current = version;
  const connection = new AbortController();
  const both = AbortSignal.any([options.signal, connection.signal]);
  const timeoutSeconds = options.timeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
  const overdueMs = timeoutSeconds * 1000 + stallTimeoutMs;
  const overdue = `the server did not end the watch within ${overdueMs} ms`;
  let stalled = false;
  let expired = false;
  const watchdog = setTimeout(() => {
    stalled = true;
    connection.abort(new WatchStalledError(overdue));
  }, overdueMs);
  try {
    await options.watch({
      path,
      query: {
        resourceVersion: current,
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(timeoutSeconds),
        ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
        ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
      },
      onEvent: (type, raw) => {
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
      onOpen: () => options.onWatching?.(true),
      signal: both,
    });
  } catch (error) {
    // The connection was cut by the watchdog: say from which version to resume.
    throw stalled ? new WatchStalledError(overdue, current) : error;
  } finally {
    clearTimeout(watchdog);
    options.onWatching?.(false);
  }
  if (expired) throw new WatchExpiredError('resourceVersion too old');
  return current;
}
