/**
 * What a decoded YAML document becomes once its aliases are expanded, measured without expanding
 * them.
 *
 * js-yaml resolves an alias to the very object its anchor produced, so a "billion laughs" file of
 * 1 KB parses into a few shared objects; the blow-up happens later, in whatever walks the tree
 * (conversion, JSON encoding, merging, cloning). This walk visits each shared object once and
 * reuses its measure at every other place it appears, so it takes time in proportion to the text,
 * and refuses the document before anything expands it.
 */

import { GoScalar, readKey } from '../manifests/go-scalar.js';
import type { MergeSources } from '../manifests/record-merge-keys.js';

/** go-yaml's decoder (decode.go): the alias share it allows falls from 99% to 10% over this range. */
const ALIAS_RATIO_RANGE_LOW = 400_000;
const ALIAS_RATIO_RANGE_HIGH = 4_000_000;

/** go-yaml's allowedAliasRatio: the share of decoded nodes that may come from alias expansion. */
export function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= ALIAS_RATIO_RANGE_LOW) return 0.99;
  if (decodeCount >= ALIAS_RATIO_RANGE_HIGH) return 0.1;
  const progress = (decodeCount - ALIAS_RATIO_RANGE_LOW) / (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW);
  return 0.99 - 0.89 * progress;
}

/**
 * go-yaml's test, made on every node it decodes: "document contains excessive aliasing" once more
 * than 100 nodes came from aliases, more than 1000 were decoded, and the aliases' share is over the
 * allowed ratio. A count that overflowed is excessive whatever the ratio says.
 */
export function isExcessiveAliasing(aliasCount: number, decodeCount: number): boolean {
  if (!Number.isFinite(decodeCount)) return true;
  return aliasCount > 100 && decodeCount > 1000 && aliasCount / decodeCount > allowedAliasRatio(decodeCount);
}

export type ExpansionMeasure =
  | {
      readonly ok: true;
      /** Decoded nodes as go-yaml counts them (the document, every key, value and alias). */
      readonly nodes: number;
      readonly aliasNodes: number;
      /** Characters of every key and scalar, at least one per node: the expanded content. */
      readonly contentBytes: number;
    }
  | {
      readonly ok: false;
      readonly kind: 'excessive-aliasing' | 'too-large';
      readonly nodes: number;
      readonly aliasNodes: number;
      readonly contentBytes: number;
    };

class Refused extends Error {
  override readonly name = 'Refused';
  constructor(readonly kind: 'excessive-aliasing' | 'too-large') {
    super(kind);
  }
}

/**
 * Measures one document as go-yaml v2 decodes it for kubectl (sigs.k8s.io/yaml unmarshals each
 * document on its own into interface{}): one count per unmarshal call, in document order, with the
 * nodes under an alias counted as aliased, and go-yaml's ratio test after each step. Within one
 * alias both counts grow together, which only raises the share while the allowed ratio only falls,
 * so testing once after the whole alias is the same as testing after each of its nodes.
 *
 * Aliases are recognised as a collection met again (the same object); a repeated scalar cannot
 * multiply anything and counts as a plain node. go-yaml decodes each value merged with `<<` in full,
 * and so does this when `merges` says what each mapping merged (`createMergeKeyRecorder`); the keys
 * a mapping got from them are not counted again as its own. `maxContentBytes` bounds the expanded
 * content, which go-yaml does not count: a few aliases to one large string would otherwise pass its
 * test and still fill the heap.
 */
export function measureExpansion(
  document: unknown,
  maxContentBytes: number,
  merges: MergeSources = new Map(),
): ExpansionMeasure {
  const memo = new Map<object, { nodes: number; bytes: number }>();
  const open = new Set<object>();
  // The document node itself is the first unmarshal call.
  let nodes = 1;
  let aliasNodes = 0;
  let bytes = 0;

  const count = (added: number, aliased: boolean, addedBytes: number) => {
    nodes += added;
    if (aliased) aliasNodes += added;
    bytes += addedBytes;
    if (isExcessiveAliasing(aliasNodes, nodes)) throw new Refused('excessive-aliasing');
    if (bytes > maxContentBytes) throw new Refused('too-large');
  };

  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof GoScalar) {
      count(1, false, typeof value === 'string' ? Math.max(1, value.length) : 1);
      return;
    }
    const known = memo.get(value);
    if (known !== undefined) {
      // The alias node, then everything under it as aliased.
      count(1, false, 0);
      count(known.nodes, true, known.bytes);
      return;
    }
    // js-yaml stores an anchor only once its node is complete, so this does not happen; go-yaml
    // refuses such a document too ("anchor value contains itself").
    if (open.has(value)) throw new Refused('excessive-aliasing');
    open.add(value);
    const nodesBefore = nodes;
    const bytesBefore = bytes;
    count(1, false, 1);
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else {
      const merged = merges.get(value) ?? [];
      const fromMerges = mergedValues(merged);
      for (const source of merged) {
        // A sequence of mappings is merged from its last item to its first; the sequence is no node.
        if (Array.isArray(source)) for (const item of [...source].reverse()) visit(item);
        else visit(source);
      }
      for (const [key, item] of Object.entries(value)) {
        // Counted with the merged mapping it came from.
        if (fromMerges.has(key) && fromMerges.get(key) === item) continue;
        count(1, false, Math.max(1, readKey(key).text.length));
        visit(item);
      }
    }
    open.delete(value);
    memo.set(value, { nodes: nodes - nodesBefore, bytes: bytes - bytesBefore });
  };

  try {
    visit(document);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, kind: error.kind, nodes, aliasNodes, contentBytes: bytes };
  }
  return { ok: true, nodes, aliasNodes, contentBytes: bytes };
}

/**
 * The key-value pairs a mapping's merges gave it: js-yaml keeps the first merged value of a key
 * unless the mapping sets its own. An own value identical to the merged one is taken as merged: at
 * worst one pair counted too few.
 */
function mergedValues(merged: readonly unknown[]): ReadonlyMap<string, unknown> {
  const values = new Map<string, unknown>();
  const sources = merged.flatMap((source) => (Array.isArray(source) ? (source as unknown[]) : [source]));
  for (const source of sources) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [key, item] of Object.entries(source)) if (!values.has(key)) values.set(key, item);
  }
  return values;
}
