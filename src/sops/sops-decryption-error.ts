import { IntentError } from '../errors/intent-error.js';

/**
 * Why a sops file could not be decrypted. Each is a problem of the repository or of the key Secret, so
 * each stalls the ApplySet until one of them changes.
 * - `no-matching-key`: none of the Secret's age identities is a recipient of the file.
 * - `mac-mismatch`: every value decrypted, but the file's MAC does not cover them (a value was added,
 *   removed, reordered or replaced by another file's).
 * - `value-tampered`: a value's (or the MAC's) GCM tag does not verify: it was changed, or moved to
 *   another key.
 * - `malformed`: the sops metadata or a value is not what sops writes.
 * - `unsupported`: sops wrote it, but with what this decryptor does not read (Shamir key groups).
 */
export type SopsProblem = 'no-matching-key' | 'mac-mismatch' | 'value-tampered' | 'malformed' | 'unsupported';

/**
 * A sops file that could not be decrypted. The message names the file and, for a value, its key path
 * (keys are stored in clear by sops); it never holds a decrypted value nor the data key.
 */
export class SopsDecryptionError extends IntentError {
  override readonly name = 'SopsDecryptionError';
  readonly code = 'SOPS_DECRYPTION_FAILED';
  readonly intent = 'stalled';
  readonly reason = 'DecryptionFailed';
  constructor(
    readonly file: string,
    readonly problem: SopsProblem,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot decrypt sops file ${file}: ${detail}; nothing was applied`, options);
  }
}
