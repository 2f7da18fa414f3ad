import { decryptDataKey } from './decrypt-data-key.js';
import { decryptSopsTree } from './decrypt-sops-tree.js';
import { emitSopsJson } from './emit-sops-json.js';
import { SopsDecryptionError } from './sops-decryption-error.js';
import { emitSopsDotenv, parseSopsDotenv } from './sops-dotenv.js';
import { readSopsMetadata } from './sops-metadata.js';
import { entryOf, parseSopsDocuments, SopsTreeError, type SopsNode } from './sops-tree.js';

/** The formats sops writes: YAML and JSON documents, dotenv, and any other file as "binary". */
type SopsFormat = 'yaml' | 'json' | 'dotenv' | 'binary';

/** A sops file read: its documents without their `sops` keys, its metadata, its format. */
interface SopsFile {
  readonly format: SopsFormat;
  readonly documents: readonly SopsNode[];
  readonly sops: SopsNode;
}

/**
 * The plaintext of a sops-encrypted file, or undefined when the file is not one (no top-level `sops`
 * key, no `sops_` keys in a dotenv file). `identities` are age X25519 identities
 * (`AGE-SECRET-KEY-1...`). YAML files decrypt to YAML (each document as JSON, which YAML reads), JSON
 * files to JSON, dotenv to dotenv, and a binary file (sops's JSON with one `data` value) to its bytes.
 *
 * Throws SopsDecryptionError naming `path` when the file is sops's and cannot be decrypted: no identity
 * opens its data key, a value or its MAC does not verify, or it is malformed. The error never carries
 * decrypted text.
 */
export async function decryptSopsFile(
  path: string,
  bytes: Uint8Array,
  identities: readonly string[],
): Promise<Uint8Array | undefined> {
  const text = Buffer.from(bytes).toString('utf8');
  const file = readSopsFile(path, text);
  if (file === undefined) return undefined;
  const read = readSopsMetadata(file.sops);
  if ('problem' in read) throw new SopsDecryptionError(path, read.problem, read.detail);
  const { metadata } = read;
  const opened = await decryptDataKey(metadata, identities);
  if ('problem' in opened) {
    const detail =
      opened.problem === 'malformed'
        ? 'its age-encrypted data key is damaged'
        : noMatchingKey(metadata.ageKeys.length, metadata.otherKeyKinds, identities.length);
    throw new SopsDecryptionError(path, opened.problem, detail);
  }
  const documents = decryptSopsTree(path, file.documents, metadata, opened.dataKey);
  return Buffer.from(emit(file.format, documents), 'utf8');
}

/** Whether a file is sops-encrypted (a top-level `sops` key, `sops_` keys in dotenv). */
export function isSopsFile(path: string, bytes: Uint8Array): boolean {
  try {
    return readSopsFile(path, Buffer.from(bytes).toString('utf8')) !== undefined;
  } catch {
    // Named sops's, but unreadable: decryption reports what is wrong with it.
    return true;
  }
}

function noMatchingKey(recipients: number, others: readonly string[], identities: number): string {
  if (recipients === 0) {
    const kinds = others.length === 0 ? 'no master key' : `only ${others.join(', ')} keys`;
    return `it is encrypted to ${kinds}, and only age is supported`;
  }
  return `none of the ${identities} age identities of the decryption Secret is one of its ${recipients} recipients`;
}

function emit(format: SopsFormat, documents: readonly SopsNode[]): string {
  const [first] = documents;
  switch (format) {
    case 'yaml':
      return documents.map((document) => `${emitSopsJson(document)}\n`).join('---\n');
    case 'json':
      return first === undefined ? '' : `${emitSopsJson(first)}\n`;
    case 'dotenv':
      return first === undefined ? '' : emitSopsDotenv(first);
    case 'binary': {
      const data = first === undefined ? undefined : entryOf(first, 'data');
      if (data?.kind !== 'scalar') return '';
      return data.value.type === 'str' ? data.value.value : emitSopsJson(data);
    }
  }
}

/** The file as sops wrote it, by its name as sops chooses the format; undefined if not sops's. */
function readSopsFile(path: string, text: string): SopsFile | undefined {
  if (!text.includes('sops')) return undefined;
  const format = formatOf(path);
  if (format === 'dotenv') {
    const parsed = parseSopsDotenv(text);
    return parsed === undefined ? undefined : { format, documents: [parsed.data], sops: parsed.sops };
  }
  let documents: SopsNode[];
  try {
    documents = parseSopsDocuments(text, path);
  } catch (error) {
    // Not YAML (nor JSON) at all: not a sops file either, the manifest reader reports it.
    if (error instanceof SopsTreeError && !/^\s*sops\s*:|"sops"\s*:/m.test(text)) return undefined;
    throw new SopsDecryptionError(path, 'malformed', messageOf(error), { cause: error });
  }
  const [first] = documents;
  const sops = first === undefined ? undefined : entryOf(first, 'sops');
  if (sops === undefined) return undefined;
  const data = documents.map((document) =>
    document.kind === 'map'
      ? { ...document, entries: document.entries.filter((entry) => entry.key !== 'sops') }
      : document,
  );
  // A binary file is sops's JSON whatever the file's name: the `data` value and the metadata.
  const binary = format !== 'yaml' && format !== 'json';
  return { format: binary ? 'binary' : format, documents: data, sops };
}

function formatOf(path: string): SopsFormat {
  const name = path.toLowerCase();
  if (name.endsWith('.yaml') || name.endsWith('.yml')) return 'yaml';
  if (name.endsWith('.json')) return 'json';
  if (name.endsWith('.env')) return 'dotenv';
  return 'binary';
}

function messageOf(error: unknown): string {
  return error instanceof SopsTreeError ? error.message : 'it cannot be read';
}
