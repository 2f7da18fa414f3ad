import { IntentError } from '../errors/intent-error.js';

/** How many sops files a message names before it only counts the rest. */
const NAMED_FILES = 5;

/**
 * sops-encrypted files and no key to decrypt them with. Applied as they are, their ciphertext would
 * become the live values (or the server would refuse only the objects it finds an unknown `sops` field
 * in, after the others were written), so the whole input is refused before anything is written.
 */
export class DecryptionNotConfiguredError extends IntentError {
  override readonly name = 'DecryptionNotConfiguredError';
  readonly code = 'SOPS_DECRYPTION_NOT_CONFIGURED';
  readonly intent = 'stalled';
  readonly reason = 'DecryptionNotConfigured';
  constructor(
    readonly files: readonly string[],
    /** What is missing, for the reader: `no spec.decryption to decrypt them with`. */
    missing: string,
  ) {
    const more = files.length > NAMED_FILES ? ` and ${files.length - NAMED_FILES} more` : '';
    super(
      `sops-encrypted files (${files.slice(0, NAMED_FILES).join(', ')}${more}) and ${missing}; nothing was applied`,
    );
  }
}
