/**
 * What the caller should do about a failure (Flux's error intents): `stalled` needs a human and is not
 * retried until the input changes, `waiting` is a known delay retried soon, `retryable` backs off.
 */
export type FailureIntent = 'stalled' | 'waiting' | 'retryable';

/**
 * The one currency of failures: every error the controller maps to a condition says what to do about
 * it (`intent`), the condition reason it is reported under (`reason`) and what caused it (`cause`).
 */
export abstract class IntentError extends Error {
  abstract readonly intent: FailureIntent;
  /** The reason of the Ready/Stalled conditions, e.g. `InventoryInvalid`: stable, tests assert it. */
  abstract readonly reason: string;
}

export function isIntentError(error: unknown): error is IntentError {
  return error instanceof IntentError;
}
