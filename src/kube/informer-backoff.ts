import { KubeApiError, KubeTransportError } from './kube-api-error.js';

/*
 * How an informer (supervised-informer.ts) waits and what it sends again when its LIST or WATCH fails,
 * pure so it is tested without a clock or a server: `random` is a number in [0, 1) supplied by the
 * caller (Math.random in production). The bounds are client-go's Reflector's, and docs/operations.md
 * ("Restarts") gives them to the operator.
 */

/** The first retry waits about this long; each further failure in a row doubles it. */
const INITIAL_RETRY_MS = 500;
/**
 * No retry waits longer than this, however long the API server stays away.
 * @internal The bound its test asserts against.
 */
export const MAX_RETRY_MS = 30_000;
/** A watch the server ends sooner than this having delivered nothing counts as a failure. */
const SHORT_WATCH_MS = 1_000;
/** Failed watches in a row (answered, not unreachable) after which the informer lists again. */
const ANSWERED_FAILURES_BEFORE_RELIST = 3;

/**
 * The wait before retrying after the `failures`-th failure in a row (1-based): 0.5 s doubling to 30 s,
 * then scaled into [½, 1] of that so the informers of many controllers, cut off by the same restart,
 * do not come back in step.
 */
export function informerRetryDelayMs(failures: number, random: number): number {
  const exponent = Math.min(Math.max(0, failures - 1), 16);
  const capped = Math.min(MAX_RETRY_MS, INITIAL_RETRY_MS * 2 ** exponent);
  return Math.max(1, Math.round(capped * (0.5 + random / 2)));
}

/**
 * A watch that ended by itself within SHORT_WATCH_MS with nothing delivered (not even a bookmark): a
 * server or proxy closing watches at once (one shutting down). Resumed at once, it would be a tight
 * loop; it is backed off as a failure instead, as client-go's "very short watch".
 */
export function isShortWatch(durationMs: number, delivered: boolean): boolean {
  return !delivered && durationMs < SHORT_WATCH_MS;
}

/**
 * What a failed watch leads to: watching again from the same version after the backoff, a new LIST
 * after it, or a new LIST at once.
 */
export type WatchRetry = 'rewatch' | 'relist' | 'relist-now';

/**
 * After the `failures`-th failed watch in a row: 410 Gone at the start of the watch (the version left
 * the server's window) lists again at once, without waiting. An unreachable server (refused, reset: it is restarting)
 * is watched again from the same version, however long it is away, so that it costs no LIST when it
 * comes back if it still has that version (a server that no longer has it answers 410 Gone, and one
 * LIST follows). A server that answers with another error lists again after a few of them.
 */
export function afterWatchFailure(error: unknown, failures: number): WatchRetry {
  if (error instanceof KubeApiError && error.status === 410) return 'relist-now';
  if (error instanceof KubeTransportError) return 'rewatch';
  return failures >= ANSWERED_FAILURES_BEFORE_RELIST ? 'relist' : 'rewatch';
}

/** Missing answers in a row after which a collection the informer held counts as gone. */
const MISSING_ANSWERS_BEFORE_GONE = 3;

/** Whether a LIST answered 404 or 403 (missingAsEmpty) is taken as "the collection is missing". */
interface MissingCollectionJudge {
  /** A LIST found the collection. */
  found(): void;
  /** A LIST answered 404 or 403: true to take it as missing (empty), false to retry it as a failure. */
  acceptMissing(): boolean;
}

/**
 * A collection never found is missing at its first 404 or 403 (no CRD, no right to list it). One the
 * informer held is missing only once that answer repeats MISSING_ANSWERS_BEFORE_GONE times in a row,
 * retried with backoff before: an API server that is starting answers 404 for a CRD's collection,
 * or 403, for a moment, which must not empty the cache of what still exists.
 */
export function missingCollectionJudge(): MissingCollectionJudge {
  let held = false;
  let answers = 0;
  return {
    found() {
      held = true;
      answers = 0;
    },
    acceptMissing() {
      answers += 1;
      if (held && answers < MISSING_ANSWERS_BEFORE_GONE) return false;
      held = false;
      answers = 0;
      return true;
    },
  };
}
