import { IntentError } from '../errors/intent-error.js';
import { ManifestSetError } from '../manifests/manifest-error.js';
import type { ApplySetInputError } from './apply-set-contract.js';

/**
 * Bad input, found before anything was written: invalid or duplicate manifests, unknown kinds, a
 * refused plan (an empty set without --allow-empty). Stalled: only a change of the input helps.
 */
export class ApplySetInputRejectedError extends IntentError implements ApplySetInputError {
  override readonly name = 'ApplySetInputRejectedError';
  readonly code = 'APPLYSET_INPUT_REJECTED';
  readonly intent = 'stalled';
  /** `UnknownKind` when every problem is a kind nobody serves (installing a CRD fixes it), else `InvalidManifests`. */
  readonly reason: 'UnknownKind' | 'InvalidManifests';
  /** The object the refusal is about when it is not a file's (the set's parent), for status. */
  readonly subject: string | undefined;
  constructor(
    readonly problems: readonly string[],
    options?: { cause?: unknown; subject?: string },
  ) {
    super(
      `the set was refused, nothing was written:\n${problems.map((problem) => `  ${problem}`).join('\n')}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.subject = options?.subject;
    const cause = options?.cause;
    this.reason =
      cause instanceof ManifestSetError &&
      cause.errors.length > 0 &&
      cause.errors.every((problem) => problem.code === 'unknown-kind')
        ? 'UnknownKind'
        : 'InvalidManifests';
  }
}

/** The apply-config object does not exist and the caller did not ask to create it. Stalled. */
export class ApplySetParentNotFoundError extends IntentError {
  override readonly name = 'ApplySetParentNotFoundError';
  readonly code = 'APPLYSET_PARENT_NOT_FOUND';
  readonly intent = 'stalled';
  readonly reason = 'ParentNotFound';
  constructor(readonly parent: string) {
    super(`the apply-config object ${parent} does not exist`);
  }
}

export function isApplySetInputError(error: unknown): error is ApplySetInputError {
  return (
    error instanceof Error &&
    (error as { intent?: unknown }).intent === 'stalled' &&
    Array.isArray((error as { problems?: unknown }).problems)
  );
}
