import { IntentError } from '../errors/intent-error.js';

/**
 * A preview that cannot be computed as the controller would compute it: the ApplySet is missing, or
 * the caller may not act as the account the controller applies it as. A preview as anyone else could
 * show changes the account may not make (or hide its refusals), so none is computed.
 */
export class PreviewRefusedError extends IntentError {
  override readonly name = 'PreviewRefusedError';
  readonly code = 'PREVIEW_REFUSED';
  readonly intent = 'stalled';
  constructor(
    /** `ApplySetNotFound` or `ImpersonationNotAllowed`. */
    readonly reason: 'ApplySetNotFound' | 'ImpersonationNotAllowed',
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}
