import type { ApplySetInputError } from './apply-set-contract.js';

/**
 * Bad input, found before anything was written: invalid or duplicate manifests, unknown kinds, a
 * refused plan (an empty set without --allow-empty). Stalled: only a change of the input helps.
 */
export class ApplySetInputRejectedError extends Error implements ApplySetInputError {
  override readonly name = 'ApplySetInputRejectedError';
  readonly code = 'APPLYSET_INPUT_REJECTED';
  readonly intent = 'stalled';
  constructor(
    readonly problems: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      `the set was refused, nothing was written:\n${problems.map((problem) => `  ${problem}`).join('\n')}`,
      options,
    );
  }
}

/** The apply-config object does not exist and the caller did not ask to create it. Stalled. */
export class ApplySetParentNotFoundError extends Error {
  override readonly name = 'ApplySetParentNotFoundError';
  readonly code = 'APPLYSET_PARENT_NOT_FOUND';
  readonly intent = 'stalled';
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
