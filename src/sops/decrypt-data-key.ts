import { Decrypter, armor } from 'age-encryption';
import type { SopsMetadata } from './sops-metadata.js';

const DATA_KEY_BYTES = 32;
/** An age X25519 identity, the only kind a key Secret may hold. */
const X25519_IDENTITY = /^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}$/;

/** The X25519 identities of a key file's text: one a line, `#` comments and blank lines skipped. */
export function parseAgeIdentities(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => X25519_IDENTITY.test(line));
}

/**
 * The file's data key, from the first of its age recipients one of `identities` opens; undefined
 * when none does. age authenticates the key (its header MAC and payload tag), so a key that opens is
 * the one sops wrote.
 */
export async function decryptDataKey(
  metadata: Pick<SopsMetadata, 'ageKeys'>,
  identities: readonly string[],
): Promise<{ readonly dataKey: Uint8Array } | { readonly problem: 'no-matching-key' | 'malformed' }> {
  if (identities.length === 0) return { problem: 'no-matching-key' };
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  let malformed = false;
  for (const { enc } of metadata.ageKeys) {
    let file: Uint8Array;
    try {
      file = armor.decode(enc);
    } catch {
      malformed = true;
      continue;
    }
    try {
      const dataKey = await decrypter.decrypt(file, 'uint8array');
      if (dataKey.length === DATA_KEY_BYTES) return { dataKey };
      malformed = true;
    } catch (error) {
      // Not one of ours: the next recipient may be. One of ours that does not open was damaged.
      if (!(error instanceof Error && error.message.includes('no identity matched'))) malformed = true;
    }
  }
  return { problem: malformed ? 'malformed' : 'no-matching-key' };
}
