import { setTimeout as delay } from 'node:timers/promises';

/**
 * `work`, tried again after each of `delaysMs` when it fails transiently (an error whose `retryable` is
 * true: 429, 5xx, a broken connection, as an API server starting or a CRD's storage initializing
 * answers), so one unlucky request does not lose what depends on it. Any other error, the last
 * attempt's, or an aborted signal ends it with that error.
 */
export async function retryingTransient<T>(
  signal: AbortSignal,
  work: () => Promise<T>,
  delaysMs: readonly number[],
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      const wait = delaysMs[attempt];
      const transient = (error as { retryable?: unknown } | undefined)?.retryable === true;
      if (!transient || wait === undefined || signal.aborted) throw error;
      // An abort during the wait ends it at once, with the error that made it wait.
      await delay(wait, undefined, { signal }).catch(() => {
        throw error;
      });
    }
  }
}
