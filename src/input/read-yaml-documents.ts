import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Alias,
  type Document,
  type DocumentOptions,
  type Node,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';
import { checkInputSize, formatSize, INPUT_BOUNDS, InputParseError, type InputKind } from './input-bounds.js';
import { isExcessiveAliasing } from './measure-expansion.js';

/**
 * A document of the `yaml` package's node tree, measured: each alias already resolved to its node, so
 * a walk never searches for an anchor (the package's own `resolve` searches the whole document, once
 * per alias).
 */
export interface MeasuredYamlDocument {
  readonly document: Document.Parsed;
  /** The node an alias stands for; undefined when no anchor before it has its name. */
  aliasTarget(alias: Alias): Node | undefined;
}

export type YamlDocumentOptions = ParseOptions & DocumentOptions & SchemaOptions;

/**
 * The documents of a text of tenant input read into the `yaml` package's node tree, for a reader
 * that needs more than values (sops: key order, integer types), through the parse door: refused over
 * the size of its kind before it is parsed, and over its depth and go-yaml's alias test (what sops's
 * own go-yaml v3 refuses) before anything walks it; an alias expanded in place by such a walk is
 * counted once per place. Syntax errors are left in each document's `errors` for the caller to word.
 * Throws InputParseError naming `source`.
 */
export function readYamlDocuments(
  text: string,
  source: string,
  kind: InputKind,
  options: YamlDocumentOptions,
): MeasuredYamlDocument[] {
  const bounds = INPUT_BOUNDS[kind];
  const tooLarge = checkInputSize(text, source, bounds);
  if (tooLarge !== undefined) throw tooLarge;
  let documents: ReturnType<typeof parseAllDocuments>;
  try {
    documents = parseAllDocuments(text, options);
  } catch (error) {
    // The composer recurses once per level: a text nesting deeper than the stack ends here.
    if (error instanceof RangeError)
      throw new InputParseError(source, 'too-deep', 'nests too deeply to read');
    throw error;
  }
  if (!Array.isArray(documents)) return [];
  return (documents as Document.Parsed[]).map((document, index) => {
    // The composer catches the end of its own stack and records it as this code.
    if (document.errors.some((error) => error.code === 'RESOURCE_EXHAUSTION')) {
      throw new InputParseError(`${source} (document ${index})`, 'too-deep', 'nests too deeply to read');
    }
    const targets = measureDocument(document, `${source} (document ${index})`, kind);
    return { document, aliasTarget: (alias) => targets.get(alias) };
  });
}

/**
 * Walks a document once, in document order (so an alias meets the last anchor of its name before
 * it, as YAML reads it), counting go-yaml's decoded and aliased nodes and the expanded characters.
 */
function measureDocument(document: Document.Parsed, source: string, kind: InputKind): Map<Alias, Node> {
  const bounds = INPUT_BOUNDS[kind];
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  const memo = new Map<Node, { nodes: number; bytes: number }>();
  const open = new Set<Node>();
  let nodes = 1;
  let aliasNodes = 0;
  let bytes = 0;
  const count = (added: number, aliased: boolean, addedBytes: number): void => {
    nodes += added;
    if (aliased) aliasNodes += added;
    bytes += addedBytes;
    if (isExcessiveAliasing(aliasNodes, nodes)) {
      throw new InputParseError(
        source,
        'excessive-aliasing',
        `contains excessive aliasing (${aliasNodes} of ${nodes} nodes come from aliases before it was refused)`,
      );
    }
    if (bytes > bounds.maxExpandedBytes) {
      throw new InputParseError(
        source,
        'expands-too-large',
        `expands to more than ${formatSize(bounds.maxExpandedBytes)} of keys and values once its aliases are expanded`,
      );
    }
  };
  const visit = (node: unknown, depth: number): void => {
    if (depth > bounds.maxDepth) {
      throw new InputParseError(source, 'too-deep', `nests deeper than ${bounds.maxDepth} levels`);
    }
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      // An alias naming no anchor is the reader's to report; one inside its own anchor never ends.
      if (target === undefined) return count(1, false, 0);
      if (open.has(target)) {
        throw new InputParseError(
          source,
          'excessive-aliasing',
          `an alias (*${node.source}) is inside its own anchor`,
        );
      }
      targets.set(node, target);
      const known = memo.get(target) ?? { nodes: 1, bytes: 1 };
      count(1, false, 0);
      return count(known.nodes, true, known.bytes);
    }
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return count(1, false, 1);
    if (node.anchor !== undefined) anchors.set(node.anchor, node);
    const nodesBefore = nodes;
    const bytesBefore = bytes;
    if (isScalar(node)) count(1, false, Math.max(1, scalarLength(node.value)));
    else {
      open.add(node);
      count(1, false, 1);
      for (const item of node.items as unknown[]) {
        if (isPair(item)) {
          visit(item.key, depth + 1);
          visit(item.value, depth + 1);
        } else visit(item, depth + 1);
      }
      open.delete(node);
    }
    memo.set(node, { nodes: nodes - nodesBefore, bytes: bytes - bytesBefore });
  };
  if (document.contents !== null) visit(document.contents, 0);
  return targets;
}

function scalarLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value instanceof Uint8Array) return value.length;
  return 1;
}
