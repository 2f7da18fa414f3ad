import { MergeConflictError, MergeError } from '../merge/merge-error.js';
import { isIntentError, type FailureIntent } from './intent-error.js';
import { messageOf } from './message-of.js';

/** A failure as the outcome mapper reads it: what to do, the condition reason, and what happened. */
export interface Failure {
  readonly intent: FailureIntent;
  readonly reason: string;
  readonly message: string;
}

/**
 * The one place a thrown error becomes an intent and a reason. An `IntentError` says both itself; a
 * merge error stalls as `MergeFailed` (only a change of the manifest helps); any other error keeps the
 * intent it declares (a Kubernetes API error: 4xx stalled, 5xx/409/429 retryable) under the reason of
 * the step that failed, and an error that declares none is retryable.
 */
export function classifyFailure(error: unknown, stepReason = 'ApplyFailed'): Failure {
  const message = messageOf(error);
  if (isIntentError(error)) return { intent: error.intent, reason: error.reason, message };
  if (error instanceof MergeError || error instanceof MergeConflictError) {
    return { intent: 'stalled', reason: 'MergeFailed', message };
  }
  const declared = error instanceof Error ? (error as { intent?: unknown }).intent : undefined;
  const intent: FailureIntent = declared === 'stalled' || declared === 'waiting' ? declared : 'retryable';
  return { intent, reason: stepReason, message };
}
