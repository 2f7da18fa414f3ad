import { entryOf, type SopsNode } from './sops-tree.js';

/** What of a file's `sops` mapping decryption reads; every key as sops writes it. */
export interface SopsMetadata {
  /** The data key, age-encrypted (ASCII armor) to each recipient. */
  readonly ageKeys: readonly { readonly recipient: string; readonly enc: string }[];
  /** Other kinds of master keys (pgp, kms...) the file also names; only counted, for the message. */
  readonly otherKeyKinds: readonly string[];
  /** `lastmodified` as written: the MAC's additional data. */
  readonly lastModified: string;
  /** The encrypted MAC (`ENC[...]`). */
  readonly mac: string;
  readonly macOnlyEncrypted: boolean;
  readonly rules: EncryptionRules;
}

/** The rules sops chose which values to encrypt by; decryption applies the same. */
export interface EncryptionRules {
  readonly unencryptedSuffix: string;
  readonly encryptedSuffix: string;
  readonly unencryptedRegex: string;
  readonly encryptedRegex: string;
  /** Set when either comment regex is: which values are encrypted then depends on comments. */
  readonly byComments: boolean;
}

const MASTER_KEY_KINDS = ['pgp', 'kms', 'gcp_kms', 'azure_kv', 'hc_vault', 'hckms'];

/**
 * The metadata of a `sops` mapping, or a sentence saying what is wrong with it. A file with several
 * key groups (Shamir's secret sharing) is reported as `unsupported`.
 */
export function readSopsMetadata(
  sops: SopsNode,
):
  | { readonly metadata: SopsMetadata }
  | { readonly problem: 'malformed' | 'unsupported'; readonly detail: string } {
  if (sops.kind !== 'map') return { problem: 'malformed', detail: 'its sops metadata is not a mapping' };
  const groups = entryOf(sops, 'key_groups');
  let keys: SopsNode = sops;
  if (groups !== undefined && groups.kind === 'seq' && groups.items.length > 0) {
    const [first] = groups.items;
    if (groups.items.length > 1 || first === undefined)
      return {
        problem: 'unsupported',
        detail: 'it is split into several key groups (Shamir), which is not supported',
      };
    keys = first;
  }
  const lastModified = stringAt(sops, 'lastmodified');
  const mac = stringAt(sops, 'mac');
  if (lastModified === undefined || mac === undefined || mac === '')
    return { problem: 'malformed', detail: 'its sops metadata has no lastmodified or no mac' };
  const ageKeys = ageKeysOf(entryOf(keys, 'age'));
  if (ageKeys === undefined)
    return { problem: 'malformed', detail: 'its sops.age is not a list of recipients' };
  return {
    metadata: {
      ageKeys,
      otherKeyKinds: MASTER_KEY_KINDS.filter((kind) => listLength(entryOf(keys, kind)) > 0),
      lastModified,
      mac,
      macOnlyEncrypted: boolAt(sops, 'mac_only_encrypted'),
      rules: {
        unencryptedSuffix: stringAt(sops, 'unencrypted_suffix') ?? '',
        encryptedSuffix: stringAt(sops, 'encrypted_suffix') ?? '',
        unencryptedRegex: stringAt(sops, 'unencrypted_regex') ?? '',
        encryptedRegex: stringAt(sops, 'encrypted_regex') ?? '',
        byComments:
          (stringAt(sops, 'unencrypted_comment_regex') ?? '') !== '' ||
          (stringAt(sops, 'encrypted_comment_regex') ?? '') !== '',
      },
    },
  };
}

function ageKeysOf(node: SopsNode | undefined): SopsMetadata['ageKeys'] | undefined {
  if (node === undefined || (node.kind === 'scalar' && node.value.type === 'null')) return [];
  if (node.kind !== 'seq') return undefined;
  const keys = [];
  for (const item of node.items) {
    const recipient = stringAt(item, 'recipient');
    const enc = stringAt(item, 'enc');
    if (recipient === undefined || enc === undefined) return undefined;
    keys.push({ recipient, enc });
  }
  return keys;
}

function stringAt(node: SopsNode, key: string): string | undefined {
  const value = entryOf(node, key);
  return value?.kind === 'scalar' && value.value.type === 'str' ? value.value.value : undefined;
}

function boolAt(node: SopsNode, key: string): boolean {
  const value = entryOf(node, key);
  return value?.kind === 'scalar' && value.value.type === 'bool' && value.value.value;
}

function listLength(node: SopsNode | undefined): number {
  return node?.kind === 'seq' ? node.items.length : 0;
}
