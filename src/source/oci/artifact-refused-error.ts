import { IntentError } from '../../errors/intent-error.js';

/**
 * Why an artifact layer was refused, as condition reasons (stable: tests and alerts match them):
 * - `ArtifactTooLarge`: the layer passed a limit of artifact-limits.ts (its compressed or expanded bytes,
 *   its entries, one file's size); the message names the limit and its flag. Or, for ref.semver, the
 *   repository's tag list passed its bounds (list-registry-tags.ts).
 * - `ArtifactUnsafe`: an entry the controller will not write: a path that is absolute, a Windows drive
 *   path, has `..`, a NUL or a backslash, or is too deep or long; a symbolic or hard link, a device, a
 *   FIFO or an unknown type; a path given twice, or under a file.
 * - `ArtifactInvalid`: the layer is not a tar+gzip stream: corrupt gzip, a corrupt tar header, or an
 *   archive cut short; the message says what broke.
 */
export type ArtifactRefusalReason = 'ArtifactTooLarge' | 'ArtifactUnsafe' | 'ArtifactInvalid';

/**
 * An OCI artifact layer the controller refuses to extract. Stalled: the layer is content-addressed,
 * so pulling the same digest again would be refused again; only a new artifact (or a raised limit)
 * changes the answer. Only the ApplySet that points at it stalls, and nothing of it is applied.
 */
export class ArtifactRefusedError extends IntentError {
  override readonly name = 'ArtifactRefusedError';
  readonly intent = 'stalled';
  constructor(
    readonly reason: ArtifactRefusalReason,
    /** The artifact, e.g. `oci://registry.example.com/team/app@sha256:…`. */
    readonly artifact: string,
    /** What is wrong, completing `artifact <artifact> …`, e.g. `expands past 200 MiB (--oci-max-expanded-bytes)`. */
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`artifact ${artifact} ${detail}; nothing was applied`, options);
  }
}
