import { InputRefusedError } from '../errors/input-refused-error.js';
import { IntentError, type ObjectError } from '../errors/intent-error.js';
import { ManifestSetError } from '../manifests/manifest-error.js';

/**
 * Bad input, found before anything was written: invalid or duplicate manifests, unknown kinds, a
 * refused plan (an empty set without --allow-empty). Stalled: only a change of the input helps.
 */
export class ApplySetInputRejectedError extends InputRefusedError {
  override readonly name = 'ApplySetInputRejectedError';
  readonly code = 'APPLYSET_INPUT_REJECTED';
  /** `UnknownKind` when every problem is a kind nobody serves (installing a CRD fixes it), else `InvalidManifests`. */
  readonly reason: 'UnknownKind' | 'InvalidManifests';
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
    this.reason = this.manifests()?.reason ?? 'InvalidManifests';
  }

  /** The files' own problems when the manifests were refused, else one line per problem. */
  override objectErrors(): readonly ObjectError[] {
    return this.manifests()?.objectErrors() ?? super.objectErrors();
  }

  private manifests(): ManifestSetError | undefined {
    return this.cause instanceof ManifestSetError ? this.cause : undefined;
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
