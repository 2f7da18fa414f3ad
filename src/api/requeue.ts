/** What a reconcile asks of the queue when it ends. */
export type Requeue =
  /** Success: run again after `intervalMs` (jittered), to check Git and correct drift. */
  | { readonly kind: 'interval'; readonly intervalMs: number }
  /** Failure that may fix itself: exponential backoff with jitter, at most `maxDelayMs`. */
  | { readonly kind: 'backoff'; readonly maxDelayMs: number }
  /** Nothing to do until the object changes (suspended, deleted). */
  | { readonly kind: 'none' };

/*
 * The delays of the work queue, pure so they can be tested without a clock: `random` is a number in
 * [0, 1) supplied by the caller (Math.random in production, a constant in tests).
 */

/** The first retry after a failure; each further failure doubles it, up to the ApplySet's retryInterval. */
export const DEFAULT_BASE_BACKOFF_MS = 1000;

/** Successful reconciles requeue after interval plus up to this fraction, so many ApplySets spread out. */
const INTERVAL_JITTER_FRACTION = 0.1;

/**
 * Exponential backoff with jitter after the `failures`-th consecutive failure (1-based): base·2^(n-1),
 * capped at `maxMs`, then scaled into [½, 1] of that so replicas of one failure do not retry in step
 * (client-go's ItemExponentialFailureRateLimiter plus jitter).
 */
export function backoffDelayMs(failures: number, baseMs: number, maxMs: number, random: number): number {
  const exponent = Math.max(0, failures - 1);
  // 2^31 is far past any cap; bounding the exponent keeps the arithmetic finite.
  const capped = Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 31));
  return Math.max(1, Math.round(capped * (0.5 + random / 2)));
}

/** `intervalMs` stretched by up to INTERVAL_JITTER_FRACTION, never shortened. */
export function jitteredIntervalMs(intervalMs: number, random: number): number {
  return Math.round(intervalMs * (1 + INTERVAL_JITTER_FRACTION * random));
}
