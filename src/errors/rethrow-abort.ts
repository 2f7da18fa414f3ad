/**
 * An abort (the run's signal, or lost leadership, named `AbortError` for this reason) ends the work in
 * flight: it is passed up as it is, never recorded as one object's failure nor wrapped.
 */
export function rethrowAbort(error: unknown): void {
  if (isAbortError(error)) throw error;
}

/**
 * Whether `error` is an abort rather than a failure. Read by its name, not `instanceof Error`:
 * `AbortSignal.abort()`'s DOMException may come from another realm (a test's VM context).
 */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}
