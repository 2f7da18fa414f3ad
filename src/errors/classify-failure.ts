import { InputRefusedError } from './input-refused-error.js';
import { IntentError, type FailureStep, type ObjectError } from './intent-error.js';
import { messageOf } from './message-of.js';
import { isAbortError } from './rethrow-abort.js';

/** What every failure says: the condition reason, the line a user reads, and the objects concerned. */
interface FailureReport {
  readonly reason: string;
  readonly message: string;
  /** The objects the failure names, for `status.errors`, when it names any. */
  readonly errors?: readonly ObjectError[];
  /** Input refused before anything was written: every problem, one a line. */
  readonly problems?: readonly string[];
  /**
   * True when the error is no `IntentError` nor an abort: nothing in the code expected it, so it is a
   * bug or a gap in the classes. The caller logs it with its stack; the user reads the step's reason.
   */
  readonly unexpected: boolean;
}

/**
 * A failure as the outcome mapper reads it: what to do, the condition reason, and what happened. A
 * `waiting` failure always knows how long to wait.
 */
export type Failure =
  | (FailureReport & { readonly intent: 'stalled' | 'retryable' })
  | (FailureReport & { readonly intent: 'waiting'; readonly afterMs: number });

/**
 * The one place a thrown error becomes an intent, a reason and what the user reads. An `IntentError`
 * says all of it itself (`describe` and `objectErrors` given the step); a `waiting` one without a known
 * delay backs off like a retryable one. Anything else was not expected: retryable under the reason of
 * the step that failed (`GitFetchFailed`, `LoadFailed`, `ApplyFailed`), or `Timeout` when the apply ran
 * out of time (its abort is what was thrown then).
 */
export function classifyFailure(error: unknown, at?: FailureStep): Failure {
  if (error instanceof IntentError) return declared(error, at);
  const message = messageOf(error);
  const unexpected = !isAbortError(error);
  switch (at?.step) {
    case 'fetch':
      return {
        intent: 'retryable',
        reason: 'GitFetchFailed',
        message: `fetching ${at.url} failed: ${message}`,
        unexpected,
      };
    case 'load':
      return { intent: 'retryable', reason: 'LoadFailed', message, unexpected };
    case 'apply':
      if (at.timedOut) {
        return {
          intent: 'retryable',
          reason: 'Timeout',
          message: `the reconcile did not finish in time: ${message}`,
          unexpected: false,
        };
      }
      return { intent: 'retryable', reason: 'ApplyFailed', message, unexpected };
    case undefined:
      return { intent: 'retryable', reason: 'ApplyFailed', message, unexpected };
  }
}

function declared(error: IntentError, at: FailureStep | undefined): Failure {
  const errors = error.objectErrors();
  const report: FailureReport = {
    reason: error.reason,
    message: error.describe(at),
    ...(errors === undefined ? {} : { errors }),
    ...(error instanceof InputRefusedError ? { problems: error.problems } : {}),
    unexpected: false,
  };
  const afterMs = error.retryAfterMs();
  if (error.intent === 'waiting') {
    return afterMs === undefined
      ? { ...report, intent: 'retryable' }
      : { ...report, intent: 'waiting', afterMs };
  }
  return { ...report, intent: error.intent };
}
