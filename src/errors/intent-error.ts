/**
 * What the caller should do about a failure (Flux's error intents): `stalled` needs a human and is not
 * retried until the input changes, `waiting` is a known delay retried soon, `retryable` backs off.
 */
export type FailureIntent = 'stalled' | 'waiting' | 'retryable';

/** One object a failure is about, as `status.errors` lists it: its inventory key or its file. */
export interface ObjectError {
  readonly object: string;
  readonly message: string;
}

/**
 * The step of a reconcile that failed, with what its messages may name: an error knows what went
 * wrong, the step knows where (the repository, the path asked for, the revision).
 */
export type FailureStep =
  | {
      readonly step: 'fetch';
      readonly url: string;
      readonly secretName: string | undefined;
      /** spec.source.certSecretRef's Secret: its TLS material is used over secretRef's. */
      readonly certSecretName?: string | undefined;
    }
  | { readonly step: 'load'; readonly path: string; readonly revision: string }
  | { readonly step: 'apply'; readonly revision: string; readonly timedOut: boolean };

/**
 * The one currency of failures: every error the controller maps to a condition says what to do about
 * it (`intent`), the condition reason it is reported under (`reason`) and what caused it (`cause`).
 * What the user reads is the error's to say too: `describe` (the line, given the step) and
 * `objectErrors` (the objects concerned); `classifyFailure` only reads them.
 */
export abstract class IntentError extends Error {
  abstract readonly intent: FailureIntent;
  /** The reason of the Ready/Stalled conditions, e.g. `InventoryInvalid`: stable, tests assert it. */
  abstract readonly reason: string;

  /** The line a user reads about this failure at `at`; the message itself unless a class knows better. */
  describe(_at: FailureStep | undefined): string {
    return this.message;
  }

  /** The objects this failure names, for `status.errors`; none unless a class has them. */
  objectErrors(): readonly ObjectError[] | undefined {
    return undefined;
  }

  /** For a `waiting` error: how soon to try again. Without it, a wait is retried with backoff. */
  retryAfterMs(): number | undefined {
    return undefined;
  }
}
