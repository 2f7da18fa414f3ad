import { createDecipheriv } from 'node:crypto';
import type { SopsScalar } from './sops-tree.js';

/** A value sops encrypted: `ENC[AES256_GCM,data:...,iv:...,tag:...,type:...]`, base64 parts. */
const ENCRYPTED_VALUE = /^ENC\[AES256_GCM,data:([^,]*),iv:([^,]+),tag:([^,]+),type:([a-z0-9]+)\]$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const GCM_TAG_BYTES = 16;

/** Whether a string has the shape of a value sops encrypted. */
export function isEncryptedValue(text: string): boolean {
  return ENCRYPTED_VALUE.test(text);
}

/**
 * Why a value did not decrypt: `malformed` (not sops's format, an unknown type, a typed value that
 * does not parse as its type) or `tampered` (the GCM tag does not verify under this key and path).
 */
export type ValueProblem = 'malformed' | 'tampered';

/**
 * Decrypts one value with the file's data key. `additionalData` binds it to its place: sops uses the
 * key path joined with ":" and ended by ":", so a value moved to another key does not verify. The
 * empty string is stored as itself (sops does not encrypt it).
 */
export function decryptSopsValue(
  text: string,
  dataKey: Uint8Array,
  additionalData: string,
): { readonly value: SopsScalar } | { readonly problem: ValueProblem } {
  if (text === '') return { value: { type: 'str', value: '' } };
  const match = ENCRYPTED_VALUE.exec(text);
  if (match === null) return { problem: 'malformed' };
  const [, data = '', iv = '', tag = '', type = ''] = match;
  if (![data, iv, tag].every((part) => BASE64.test(part))) return { problem: 'malformed' };
  const tagBytes = Buffer.from(tag, 'base64');
  const ivBytes = Buffer.from(iv, 'base64');
  if (tagBytes.length !== GCM_TAG_BYTES || ivBytes.length === 0) return { problem: 'malformed' };
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, ivBytes, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(Buffer.from(additionalData, 'utf8'));
    decipher.setAuthTag(tagBytes);
    plain = Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]);
  } catch {
    return { problem: 'tampered' };
  }
  const value = typed(plain, type);
  return value === undefined ? { problem: 'malformed' } : { value };
}

/** The plaintext as the type sops recorded (Go's strconv rules for int, float and bool). */
function typed(plain: Buffer, type: string): SopsScalar | undefined {
  const text = plain.toString('utf8');
  switch (type) {
    case 'str':
    case 'comment':
      return { type: 'str', value: text };
    case 'int':
    case 'int64':
      return /^[+-]?[0-9]+$/.test(text) ? { type: 'int', value: BigInt(text) } : undefined;
    case 'float': {
      const value = Number(text);
      return text.trim() === '' || Number.isNaN(value) ? undefined : { type: 'float', value };
    }
    case 'bool':
      return parseGoBool(text);
    case 'bytes':
      return { type: 'bytes', value: new Uint8Array(plain) };
    default:
      return undefined;
  }
}

function parseGoBool(text: string): SopsScalar | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return { type: 'bool', value: true };
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return { type: 'bool', value: false };
  return undefined;
}
