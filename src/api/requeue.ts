/** What a reconcile asks of the queue when it ends. */
export type Requeue =
  /** Success: run again after `intervalMs` (jittered), to check Git and correct drift. */
  | { readonly kind: 'interval'; readonly intervalMs: number }
  /** Failure that may fix itself: exponential backoff with jitter, at most `maxDelayMs`. */
  | { readonly kind: 'backoff'; readonly maxDelayMs: number }
  /** Nothing to do until the object changes (suspended, deleted). */
  | { readonly kind: 'none' };
