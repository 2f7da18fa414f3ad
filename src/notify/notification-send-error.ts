import { IntentError } from '../errors/intent-error.js';

/**
 * A receiver refused or did not answer a notification. Its message names the receiver and the HTTP
 * status or network error, never the address: a webhook's URL often is its credential.
 */
export class NotificationSendError extends IntentError {
  readonly intent = 'retryable';
  readonly reason = 'NotificationFailed';

  constructor(receiver: string, problem: string, options?: { readonly cause?: unknown }) {
    super(`notification to ${receiver} failed: ${problem}`, options);
    this.name = 'NotificationSendError';
  }
}
