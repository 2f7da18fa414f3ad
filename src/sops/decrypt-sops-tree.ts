import { createHash, timingSafeEqual } from 'node:crypto';
import { decryptSopsValue, isEncryptedValue } from './decrypt-sops-value.js';
import { compileTenantPattern, TenantPatternError, type TenantPattern } from '../patterns/tenant-pattern.js';
import { SopsDecryptionError } from './sops-decryption-error.js';
import type { EncryptionRules, SopsMetadata } from './sops-metadata.js';
import type { SopsNode, SopsScalar } from './sops-tree.js';

/**
 * The 32 bytes a MAC over only the encrypted values starts from (sha256 of "sops"), so that such a MAC
 * never equals one over every value.
 */
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from(
  '8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69',
  'hex',
);

/**
 * Decrypts the documents of one file (their `sops` keys removed) and verifies the file's MAC: sha512
 * over the leaves in document order (every leaf, or only the encrypted ones with mac_only_encrypted),
 * as their text (ints in decimal, floats shortest, booleans True/False), upper-case hex, stored
 * encrypted with `lastmodified` as additional data. Throws SopsDecryptionError naming the file and
 * the key path, never a value.
 */
export function decryptSopsTree(
  file: string,
  documents: readonly SopsNode[],
  metadata: SopsMetadata,
  dataKey: Uint8Array,
): SopsNode[] {
  const hash = createHash('sha512');
  if (metadata.macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_INIT);
  const decideEncrypted = encryptionRule(file, metadata.rules);
  const visit = (leaf: SopsScalar, path: readonly string[]): SopsScalar => {
    if (leaf.type === 'null') return leaf;
    const encrypted = decideEncrypted(path, leaf);
    let value: SopsScalar = leaf;
    if (encrypted) {
      const where = path.join('.');
      if (leaf.type !== 'str')
        throw new SopsDecryptionError(
          file,
          'malformed',
          `the value at ${where} should be encrypted and is not`,
        );
      const opened = decryptSopsValue(leaf.value, dataKey, `${path.join(':')}:`);
      if ('problem' in opened) {
        const why =
          opened.problem === 'tampered'
            ? 'does not verify (it was changed, or moved from another key)'
            : 'is not a value sops encrypted';
        throw new SopsDecryptionError(
          file,
          opened.problem === 'tampered' ? 'value-tampered' : 'malformed',
          `the value at ${where} ${why}`,
        );
      }
      value = opened.value;
    }
    if (!metadata.macOnlyEncrypted || encrypted) hash.update(macBytes(value));
    return value;
  };
  const decrypted = documents.map((document) => walk(document, [], visit));
  verifyMac(file, hash.digest('hex').toUpperCase(), metadata, dataKey);
  return decrypted;
}

function verifyMac(file: string, computed: string, metadata: SopsMetadata, dataKey: Uint8Array): void {
  const stored = decryptSopsValue(metadata.mac, dataKey, macAdditionalData(metadata.lastModified));
  if ('problem' in stored)
    throw new SopsDecryptionError(
      file,
      stored.problem === 'tampered' ? 'value-tampered' : 'malformed',
      'its MAC does not verify (sops.mac or sops.lastmodified was changed)',
    );
  const expected = stored.value.type === 'str' ? stored.value.value : '';
  const same =
    expected.length === computed.length && timingSafeEqual(Buffer.from(expected), Buffer.from(computed));
  if (!same)
    throw new SopsDecryptionError(
      file,
      'mac-mismatch',
      'its values do not match its MAC (a value was added, removed, reordered or replaced)',
    );
}

/**
 * sops formats `lastmodified` with Go's RFC 3339 layout, which has no fraction of a second: a
 * fraction written by hand is dropped the same way before it authenticates the MAC.
 */
function macAdditionalData(lastModified: string): string {
  return lastModified.replace(/^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d+/, '$1');
}

function walk(
  node: SopsNode,
  path: readonly string[],
  visit: (leaf: SopsScalar, path: readonly string[]) => SopsScalar,
): SopsNode {
  switch (node.kind) {
    case 'map':
      return {
        kind: 'map',
        entries: node.entries.map(({ key, value }) => ({ key, value: walk(value, [...path, key], visit) })),
      };
    case 'seq':
      // Items of a list share its path: sops adds no index.
      return { kind: 'seq', items: node.items.map((item) => walk(item, path, visit)) };
    case 'scalar':
      return { kind: 'scalar', value: visit(node.value, path) };
  }
}

/**
 * Whether sops encrypted the leaf at `path`, by the file's rules: a key on the path ending in the
 * unencrypted suffix or matching the unencrypted regex leaves it clear; an encrypted suffix or regex,
 * when set, encrypts only what a key on the path matches. Rules by comments cannot be followed here
 * (comments are not kept), so such files are read by the values' own shape.
 */
function encryptionRule(
  file: string,
  rules: EncryptionRules,
): (path: readonly string[], leaf: SopsScalar) => boolean {
  if (rules.byComments) return (_path, leaf) => leaf.type === 'str' && isEncryptedValue(leaf.value);
  const unencryptedRegex = goRegex(file, 'unencrypted_regex', rules.unencryptedRegex);
  const encryptedRegex = goRegex(file, 'encrypted_regex', rules.encryptedRegex);
  return (path) => {
    let encrypted = true;
    if (rules.unencryptedSuffix !== '' && path.some((key) => key.endsWith(rules.unencryptedSuffix)))
      encrypted = false;
    if (rules.encryptedSuffix !== '') encrypted = path.some((key) => key.endsWith(rules.encryptedSuffix));
    if (unencryptedRegex !== undefined && path.some((key) => unencryptedRegex.test(key))) encrypted = false;
    if (encryptedRegex !== undefined) encrypted = path.some((key) => encryptedRegex.test(key));
    return encrypted;
  };
}

/**
 * A rule's regular expression as sops reads it: Go's `regexp` (RE2), matched anywhere in a key. It
 * comes from the file, before its MAC is checked, so it goes through the pattern door (linear time
 * whatever it is); one RE2 cannot read is refused, as sops itself would refuse the file.
 */
function goRegex(file: string, field: string, source: string): TenantPattern | undefined {
  if (source === '') return undefined;
  try {
    return compileTenantPattern(source, `sops.${field}`);
  } catch (error) {
    if (!(error instanceof TenantPatternError)) throw error;
    throw new SopsDecryptionError(file, 'malformed', error.message, { cause: error });
  }
}

/** A leaf's bytes in the MAC, as sops's ToBytes writes them. */
function macBytes(value: SopsScalar): Uint8Array {
  switch (value.type) {
    case 'str':
      return Buffer.from(value.value, 'utf8');
    case 'int':
      return Buffer.from(value.value.toString(), 'utf8');
    case 'float':
      return Buffer.from(goFloat(value.value), 'utf8');
    case 'bool':
      return Buffer.from(value.value ? 'True' : 'False', 'utf8');
    case 'bytes':
      return value.value;
    case 'null':
      return new Uint8Array();
  }
}

/** Go's strconv.FormatFloat(f, 'f', -1, 64): the shortest digits that round-trip, never an exponent. */
function goFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
  const shortest = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(shortest);
  if (match === null) return shortest;
  const [, sign = '', lead = '', rest = '', exponentText = '0'] = match;
  const digits = lead + rest;
  const point = 1 + Number(exponentText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
