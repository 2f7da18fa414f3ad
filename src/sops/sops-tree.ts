import { isAlias, isMap, isScalar, isSeq, type Node } from 'yaml';
import { InputParseError } from '../input/input-bounds.js';
import { readYamlDocuments, type MeasuredYamlDocument } from '../input/read-yaml-documents.js';

/**
 * A document as sops walks it: mappings keep their keys in file order (the MAC covers the order, and a
 * plain object would move keys like "10" first), scalars keep whether they were integers.
 */
export type SopsNode =
  | { readonly kind: 'map'; readonly entries: readonly SopsEntry[] }
  | { readonly kind: 'seq'; readonly items: readonly SopsNode[] }
  | { readonly kind: 'scalar'; readonly value: SopsScalar };

export interface SopsEntry {
  readonly key: string;
  readonly value: SopsNode;
}

/** A leaf: `int` is kept apart from `float` because sops writes and hashes them differently. */
export type SopsScalar =
  | { readonly type: 'str'; readonly value: string }
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'null' };

/** Why a text could not be read as sops reads it; never quotes the text. */
export class SopsTreeError extends Error {
  override readonly name = 'SopsTreeError';
}

/**
 * The documents of a YAML (or JSON, which is YAML) text, each a mapping, with YAML 1.2's core schema
 * as sops's go-yaml v3 reads them. Comments are dropped: sops leaves them out of the MAC, and the
 * decrypted manifests do not need them. The text comes through the parse door (src/input/): a file
 * whose aliases would expand it past go-yaml's test is refused before this walk expands them.
 */
export function parseSopsDocuments(text: string, source: string): SopsNode[] {
  let documents: MeasuredYamlDocument[];
  try {
    documents = readYamlDocuments(text, source, 'sops', {
      schema: 'core',
      intAsBigInt: true,
      uniqueKeys: false,
    });
  } catch (error) {
    if (error instanceof InputParseError) throw new SopsTreeError(error.detail, { cause: error });
    throw error;
  }
  return documents.map((measured, index) => {
    const { document } = measured;
    const problem = document.errors[0];
    // The parser's message quotes the line around the error: only its code and place are kept.
    if (problem !== undefined) {
      const at = problem.linePos?.[0];
      const where = at === undefined ? '' : ` at line ${at.line}, column ${at.col}`;
      throw new SopsTreeError(`document ${index + 1} is not valid YAML (${problem.code}${where})`);
    }
    const root: SopsNode =
      document.contents === null ? { kind: 'map', entries: [] } : toNode(document.contents, measured);
    if (root.kind !== 'map') throw new SopsTreeError(`document ${index + 1} is not a mapping`);
    return root;
  });
}

function toNode(node: Node, document: MeasuredYamlDocument): SopsNode {
  if (isAlias(node)) {
    const target = document.aliasTarget(node);
    if (target === undefined) throw new SopsTreeError('an alias names no anchor');
    return toNode(target, document);
  }
  if (isMap(node)) {
    // Repeated keys are found here in one pass: the parser's own check compares every pair of keys
    // (measured: 150 ms more for a Secret of 500 values, growing with the square).
    const seen = new Set<string>();
    const entries = node.items.map((pair) => {
      const key = isScalar(pair.key) ? pair.key.value : undefined;
      // sops refuses any key but a string; so does this, as a malformed file.
      if (typeof key !== 'string') throw new SopsTreeError('a mapping has a key that is not a string');
      if (seen.has(key)) throw new SopsTreeError('a mapping has a key twice');
      seen.add(key);
      const value = pair.value === null ? scalarNode({ type: 'null' }) : toNode(pair.value as Node, document);
      return { key, value };
    });
    return { kind: 'map', entries };
  }
  if (isSeq(node)) {
    return {
      kind: 'seq',
      items: node.items.map((item) =>
        item === null ? scalarNode({ type: 'null' }) : toNode(item as Node, document),
      ),
    };
  }
  if (isScalar(node)) return scalarNode(scalarOf(node.value));
  throw new SopsTreeError('a node is neither a mapping, a list nor a scalar');
}

function scalarOf(value: unknown): SopsScalar {
  if (typeof value === 'string') return { type: 'str', value };
  if (typeof value === 'bigint') return { type: 'int', value };
  if (typeof value === 'number') return { type: 'float', value };
  if (typeof value === 'boolean') return { type: 'bool', value };
  if (value === null || value === undefined) return { type: 'null' };
  if (value instanceof Uint8Array) return { type: 'bytes', value };
  throw new SopsTreeError('a scalar has a type sops does not write');
}

function scalarNode(value: SopsScalar): SopsNode {
  return { kind: 'scalar', value };
}

/** The value of `key` in a mapping, if it has one. */
export function entryOf(node: SopsNode, key: string): SopsNode | undefined {
  return node.kind === 'map' ? node.entries.find((entry) => entry.key === key)?.value : undefined;
}
