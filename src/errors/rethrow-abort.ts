/**
 * An abort (the run's signal, or lost leadership, named `AbortError` for this reason) ends the work in
 * flight: it is passed up as it is, never recorded as one object's failure nor wrapped.
 */
export function rethrowAbort(error: unknown): void {
  if (isAbortError(error)) throw error;
}

/** Whether `error` is an abort rather than a failure (`AbortSignal.abort()`'s DOMException included). */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
