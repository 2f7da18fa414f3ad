import { IntentError } from '../errors/intent-error.js';

/** Why the strategic-merge engine refused its input; the messages follow apimachinery's wording. */
export type MergeErrorCode =
  | 'invalid-document'
  | 'missing-merge-key'
  | 'bad-list-elements'
  | 'bad-patch'
  | 'set-element-order-mismatch'
  | 'retain-keys-mismatch';

/**
 * The documents cannot be merged as they are: a human must change the manifest (a list element
 * without its merge key, mixed element types, a malformed directive), so this is a "stalled" error,
 * reported as `MergeFailed`.
 */
export class MergeError extends IntentError {
  override readonly name = 'MergeError';
  readonly intent = 'stalled';
  readonly reason = 'MergeFailed';
  constructor(
    readonly code: MergeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * `--overwrite=false`: the patch would overwrite a change someone made to the live object since the
 * last apply (docs/merge-semantics.md#5-combining-and-conflicts).
 */
export class MergeConflictError extends IntentError {
  override readonly name = 'MergeConflictError';
  readonly code = 'MERGE_CONFLICT';
  readonly intent = 'stalled';
  readonly reason = 'MergeFailed';
  constructor(
    readonly patchText: string,
    readonly changedText: string,
  ) {
    super(`patch:\n${patchText}\nconflicts with changes made from original to current:\n${changedText}\n`);
  }
}
