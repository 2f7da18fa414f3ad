import { IntentError } from '../errors/intent-error.js';
import { createCollectionKeyCheck } from './check-collection-keys.js';
import { createFlowPlainScalarCheck } from './check-flow-plain-scalars.js';
import { createQuotedEscapeCheck } from './check-quoted-escapes.js';
import { checkYamlCharacters } from './check-yaml-characters.js';
import { GoScalar, mappingToJson } from './go-scalar.js';
import { goYamlV2Schema } from './go-yaml-v2-schema.js';
import yaml from 'js-yaml';
import type { JsonValue } from './json-value.js';
import { DEFAULT_MANIFEST_LIMITS, formatBytes } from './manifest-limits.js';
import { allowedAliasRatio, measureExpansion, type ExpansionMeasure } from '../input/measure-expansion.js';
import { createMergeKeyRecorder, type MergeSources } from './record-merge-keys.js';
import {
  jsonValueSpans,
  locateJsonSyntaxError,
  type JsonSyntaxLocation,
} from './locate-json-syntax-error.js';
import { parseJsonLossless } from './lossless-json.js';

/** One YAML document of a file, or the single document of a JSON file. `value` is null when empty. */
export interface DecodedDocument {
  /** 0-based position of the document in its file. */
  readonly index: number;
  readonly value: JsonValue;
  /** Characters of its keys and scalars once aliases are expanded (see `measureExpansion`). */
  readonly contentBytes: number;
}

/** How much one document, and all the documents of the set together, may decode to. */
export interface DecodeLimits {
  readonly maxDocumentBytes: number;
  readonly maxTotalBytes: number;
  /** What the files before this one in the set decoded to. */
  readonly decodedBefore?: number;
}

const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxDocumentBytes: DEFAULT_MANIFEST_LIMITS.maxFileBytes,
  maxTotalBytes: DEFAULT_MANIFEST_LIMITS.maxSetBytes,
};

export class ManifestDecodeError extends Error {
  override readonly name = 'ManifestDecodeError';
  readonly code = 'MANIFEST_DECODE';
  /** 1-based line of the problem in the file, when the parser knows it. */
  readonly line: number | undefined;
  /** 1-based column of the problem, when the parser knows it. */
  readonly column: number | undefined;
  constructor(
    readonly source: string,
    readonly documentIndex: number | undefined,
    /** What is wrong, without the file, document and place the message starts with. */
    readonly reason: string,
    options?: { cause?: unknown; line?: number; column?: number },
  ) {
    super(
      `${source}${documentIndex === undefined ? '' : ` (document ${documentIndex})`}` +
        `${options?.line === undefined ? '' : ` line ${options.line}`}` +
        `${options?.line === undefined || options.column === undefined ? '' : ` column ${options.column}`}: ${reason}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.line = options?.line;
    this.column = options?.column;
  }
}

/** A document refused before its aliases were expanded: too much aliasing, or too large decoded. */
export class ManifestExpansionError extends IntentError {
  override readonly name = 'ManifestExpansionError';
  readonly intent = 'stalled';
  readonly reason = 'InvalidManifests';
  readonly code: 'MANIFEST_EXCESSIVE_ALIASING' | 'MANIFEST_DOCUMENT_TOO_LARGE' | 'MANIFEST_SET_TOO_LARGE';
  constructor(
    readonly source: string,
    readonly documentIndex: number,
    readonly kind: 'excessive-aliasing' | 'document-too-large' | 'set-too-large',
    readonly detail: string,
  ) {
    super(`${source} (document ${documentIndex}): ${detail}`);
    this.code = {
      'excessive-aliasing': 'MANIFEST_EXCESSIVE_ALIASING' as const,
      'document-too-large': 'MANIFEST_DOCUMENT_TOO_LARGE' as const,
      'set-too-large': 'MANIFEST_SET_TOO_LARGE' as const,
    }[kind];
  }
}

/**
 * Decodes a manifest file's text into documents the way kubectl does, so that the
 * last-applied annotation we write is byte for byte the one kubectl writes for the same file.
 *
 * kubectl (k8s.io/apimachinery's YAMLOrJSONDecoder) sniffs the text: if it starts with `{` it is
 * JSON, otherwise YAML converted to JSON by sigs.k8s.io/yaml, which parses with go-yaml v2, a YAML
 * 1.1 resolver. A YAML 1.2 parser reads `enabled: yes`, `mode: 0644` or `on: push` differently, so
 * plain scalars here are resolved by `goYamlV2Schema` (go-yaml-v2-schema.ts), not by js-yaml's defaults.
 *
 * Integers beyond ±2^53 that fit an int64 are `bigint`s, exact as kubectl keeps them (lossless-json.ts).
 */
export function decodeDocuments(
  text: string,
  source: string,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): DecodedDocument[] {
  if (/^\s*\{/.test(text)) return decodeJson(text, source, limits);
  return decodeYaml(text, source, limits);
}

function decodeYaml(text: string, source: string, limits: DecodeLimits): DecodedDocument[] {
  refuseReaderCharacters(text, source);
  // go-yaml v2 takes NEL, LS and PS for line breaks (YAML 1.1), as js-yaml does not: a raw one in a
  // plain scalar ends the line there, one in a quoted scalar folds to a space.
  text = text.replace(/[\u0085\u2028\u2029]/g, '\n');
  const docs: DecodedDocument[] = [];
  let total = limits.decodedBefore ?? 0;
  // Each document is measured before `toJsonValue` (the first walk that would expand its aliases).
  const merges = createMergeKeyRecorder();
  const checkEscapes = createQuotedEscapeCheck(text);
  const checkKeys = createCollectionKeyCheck();
  const checkFlowScalars = createFlowPlainScalarCheck(text);
  const take = (doc: unknown) => {
    const contentBytes = checkExpansion(doc, source, docs.length, limits, total, merges.sources);
    total += contentBytes;
    docs.push({ index: docs.length, value: toJsonValue(doc), contentBytes });
  };
  // js-yaml 4.3 reads `maxTotalMergeKeys`; its typings do not list it yet.
  const options: yaml.LoadOptions & { maxTotalMergeKeys: number } = {
    schema: goYamlV2Schema,
    filename: source,
    listener: (eventType, state) => {
      merges.listener(eventType, state);
      checkEscapes(eventType, state);
      checkKeys(eventType, state);
      checkFlowScalars(eventType, state);
    },
    maxTotalMergeKeys: MAX_MERGED_KEYS_PER_FILE,
    // go-yaml v2 (non-strict, as kubectl uses it) lets a repeated key overwrite the earlier one.
    json: true,
  };
  try {
    yaml.loadAll(text, take, options);
    return docs;
  } catch (error) {
    if (error instanceof ManifestExpansionError) throw error;
    const mark = error instanceof yaml.YAMLException ? error.mark : undefined;
    const reason = error instanceof yaml.YAMLException ? error.reason : undefined;
    const message = reason ?? (error instanceof Error ? error.message : String(error));
    // Errors raised while converting come from the iterator, after `docs.length` documents were taken.
    const index = mark === undefined ? docs.length : documentIndexAt(text, mark.position);
    if (reason?.startsWith('merge keys exceeded maxTotalMergeKeys') === true) {
      throw new ManifestExpansionError(
        source,
        index,
        'excessive-aliasing',
        `document contains excessive aliasing: the merge keys (<<) of the file copy more than ` +
          `${MAX_MERGED_KEYS_PER_FILE} keys`,
      );
    }
    // js-yaml's `message` quotes the lines around the error (a Secret value, maybe): only its `reason`
    // and `mark` are kept, and a YAMLException is not carried as the cause.
    const cause = error instanceof yaml.YAMLException ? undefined : error;
    return throwDecodeError(source, index, message, cause, mark?.line ?? -1, mark?.column ?? -1);
  }
}

/** go-yaml's reader refuses a control character anywhere in the text (check-yaml-characters.ts). */
function refuseReaderCharacters(text: string, source: string): void {
  try {
    checkYamlCharacters(text);
  } catch (error) {
    if (!(error instanceof yaml.YAMLException)) throw error;
    const { mark } = error;
    throwDecodeError(
      source,
      documentIndexAt(text, mark.position),
      error.reason,
      undefined,
      mark.line,
      mark.column,
    );
  }
}

/**
 * js-yaml counts the keys it copies for `<<` over the whole file and by default refuses past 10,000,
 * which refuses files kubectl reads (a thousand documents each merging a 20-key anchor). go-yaml has
 * no such limit: its alias test counts each merge, which `measureExpansion` repeats. What stays is a
 * bound on the copying js-yaml does before that test can run: 250,000 keys take about 15 MiB and
 * 100 ms, and go-yaml refuses the documents that get near it (each merged key costs it two nodes
 * from an alias).
 */
const MAX_MERGED_KEYS_PER_FILE = 250_000;

/**
 * js-yaml parses every document before handing any out, so the failing document is found from the
 * error position: the number of `---` separators before it, not counting one that opens the file.
 */
function documentIndexAt(text: string, position: number): number {
  const before = text.slice(0, position);
  const markers = before.match(/^---(?=\s|$)/gm)?.length ?? 0;
  const opensWithMarker = /^(?:\s*#[^\n]*\n|\s*\n)*---(?=\s|$)/.test(text);
  return Math.max(0, opensWithMarker ? markers - 1 : markers);
}

function throwDecodeError(
  source: string,
  index: number | undefined,
  message: string,
  cause: unknown,
  line0 = -1,
  column0 = -1,
): never {
  throw new ManifestDecodeError(source, index, message, {
    ...(cause === undefined ? {} : { cause }),
    ...(line0 < 0 ? {} : { line: line0 + 1 }),
    ...(column0 < 0 ? {} : { column: column0 + 1 }),
  });
}

/** JSON files: a stream of one or more JSON values, as kubectl's JSON decoder reads them. */
function decodeJson(text: string, source: string, limits: DecodeLimits): DecodedDocument[] {
  let value: JsonValue;
  try {
    value = parseJsonLossless(text) as JsonValue;
  } catch (error) {
    const spans = jsonValueSpans(text);
    if (spans !== undefined && spans.length > 1) return decodeJsonStream(text, spans, source, limits);
    // kubectl reads a first document that is not JSON again as YAML, and refuses it (with the JSON
    // error) only when that fails too: a tab or a line break inside a string, a trailing comma or a
    // single-quoted string pass as YAML. A limit the YAML document breaks is still ours to report.
    try {
      return decodeYaml(text, source, limits);
    } catch (yamlError) {
      if (yamlError instanceof ManifestExpansionError) throw yamlError;
    }
    // JSON.parse's message quotes the input around the error (a Secret value, maybe): only where and
    // why are kept, and the error itself is not carried as the cause.
    const where = locateJsonError(text);
    const reason = where?.reason ?? `not valid JSON (${error instanceof Error ? error.name : 'error'})`;
    return throwDecodeError(source, 0, reason, undefined, (where?.line ?? 0) - 1, (where?.column ?? 0) - 1);
  }
  // JSON has no aliases; measured still, for the total of the set.
  return [
    { index: 0, value, contentBytes: checkExpansion(value, source, 0, limits, limits.decodedBefore ?? 0) },
  ];
}

/** Each value of a JSON stream is a document of its own, measured into the set's total in turn. */
function decodeJsonStream(
  text: string,
  spans: readonly [number, number][],
  source: string,
  limits: DecodeLimits,
): DecodedDocument[] {
  let total = limits.decodedBefore ?? 0;
  return spans.map(([start, end], index) => {
    const value = parseJsonLossless(text.slice(start, end)) as JsonValue;
    const contentBytes = checkExpansion(value, source, index, limits, total);
    total += contentBytes;
    return { index, value, contentBytes };
  });
}

/** Where JSON.parse stopped; undefined when the text nests too deeply for the locator's recursion. */
function locateJsonError(text: string): JsonSyntaxLocation | undefined {
  try {
    return locateJsonSyntaxError(text);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** The document's expanded content in bytes, or a ManifestExpansionError naming file and document. */
function checkExpansion(
  doc: unknown,
  source: string,
  index: number,
  limits: DecodeLimits,
  totalBefore: number,
  merges?: MergeSources,
): number {
  const remaining = limits.maxTotalBytes - totalBefore;
  const documentBound = remaining < limits.maxDocumentBytes;
  const measure = measureExpansion(doc, documentBound ? remaining : limits.maxDocumentBytes, merges);
  if (measure.ok) return measure.contentBytes;
  if (measure.kind === 'excessive-aliasing') {
    throw new ManifestExpansionError(source, index, 'excessive-aliasing', excessiveAliasing(measure));
  }
  if (documentBound) {
    throw new ManifestExpansionError(
      source,
      index,
      'set-too-large',
      `the documents of the set decode to more than ${formatBytes(limits.maxTotalBytes)} of keys and values, ` +
        `over the limit per set`,
    );
  }
  throw new ManifestExpansionError(
    source,
    index,
    'document-too-large',
    `the document decodes to more than ${formatBytes(limits.maxDocumentBytes)} of keys and values once its ` +
      `aliases are expanded, over the limit per document`,
  );
}

/** go-yaml's words (kubectl prints "yaml: document contains excessive aliasing"), with the numbers. */
function excessiveAliasing(measure: ExpansionMeasure): string {
  if (!Number.isFinite(measure.nodes)) return 'document contains excessive aliasing';
  const percent = (ratio: number) => `${Number((ratio * 100).toFixed(1))}%`;
  return (
    `document contains excessive aliasing: its aliases expand it to at least ${measure.nodes} nodes, ` +
    `${percent(measure.aliasNodes / measure.nodes)} of them from aliases, over the ` +
    `${percent(allowedAliasRatio(measure.nodes))} kubectl's YAML reader (go-yaml) allows`
  );
}

/**
 * The JSON value of a decoded document, as sigs.k8s.io/yaml converts go-yaml's: scalars unwrapped,
 * mapping keys as `mappingToJson` spells (or refuses) them. go-yaml v2 yields NaN/Inf for
 * `.nan`/`.inf`, which JSON cannot hold: kubectl refuses them, and so does this.
 */
function toJsonValue(value: unknown, path = ''): JsonValue {
  if (value instanceof GoScalar) {
    const scalar = value.value;
    if (typeof scalar === 'number' && !Number.isFinite(scalar)) {
      throw new yaml.YAMLException(`json: unsupported value: ${String(scalar)}`);
    }
    return scalar;
  }
  if (Array.isArray(value)) return value.map((item, index) => toJsonValue(item, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') return mappingToJson(value, path, toJsonValue);
  return (value ?? null) as JsonValue;
}
