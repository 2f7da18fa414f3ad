import yaml from 'js-yaml';
import type { JsonValue } from './json-value.js';

/** One YAML document of a file, or the single document of a JSON file. `value` is null when empty. */
export interface DecodedDocument {
  /** 0-based position of the document in its file. */
  readonly index: number;
  readonly value: JsonValue;
}

export class ManifestDecodeError extends Error {
  override readonly name = 'ManifestDecodeError';
  readonly code = 'MANIFEST_DECODE';
  /** 1-based line of the problem in the file, when the parser knows it. */
  readonly line: number | undefined;
  constructor(
    readonly source: string,
    readonly documentIndex: number | undefined,
    message: string,
    options?: { cause?: unknown; line?: number },
  ) {
    super(
      `${source}${documentIndex === undefined ? '' : ` (document ${documentIndex})`}` +
        `${options?.line === undefined ? '' : ` line ${options.line}`}: ${message}`,
      options,
    );
    this.line = options?.line;
  }
}

/**
 * Decodes a manifest file's text into documents the way kubectl does, so that the
 * last-applied annotation we write is byte for byte the one kubectl writes for the same file.
 *
 * kubectl (k8s.io/apimachinery's YAMLOrJSONDecoder) sniffs the text: if it starts with `{` it is
 * JSON, otherwise YAML converted to JSON by sigs.k8s.io/yaml, which parses with go-yaml v2, a YAML
 * 1.1 resolver. A YAML 1.2 parser reads `enabled: yes`, `mode: 0644` or `on: push` differently, so
 * plain scalars here are resolved by `goYamlV2Schema` below, not by js-yaml's defaults.
 *
 * Known limitation: integers beyond ±2^53 lose precision (JS numbers); kubectl keeps int64.
 */
export function decodeDocuments(text: string, source: string): DecodedDocument[] {
  if (/^\s*\{/.test(text)) return decodeJson(text, source);
  const docs: DecodedDocument[] = [];
  try {
    yaml.loadAll(text, (doc) => docs.push({ index: docs.length, value: toJsonValue(doc) }), {
      schema: goYamlV2Schema,
      filename: source,
      // go-yaml v2 (non-strict, as kubectl uses it) lets a repeated key overwrite the earlier one.
      json: true,
    });
    return docs;
  } catch (error) {
    const mark = error instanceof yaml.YAMLException ? error.mark : undefined;
    const reason = error instanceof yaml.YAMLException ? error.reason : undefined;
    const message = reason ?? (error instanceof Error ? error.message : String(error));
    // Errors raised while converting come from the iterator, after `docs.length` documents were taken.
    const index = mark === undefined ? docs.length : documentIndexAt(text, mark.position);
    return throwDecodeError(source, index, message, error, mark === undefined ? undefined : mark.line + 1);
  }
}

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
  line?: number,
): never {
  throw new ManifestDecodeError(source, index, message, line === undefined ? { cause } : { cause, line });
}

/** JSON files: a stream of one or more JSON values, as kubectl's JSON decoder reads them. */
function decodeJson(text: string, source: string): DecodedDocument[] {
  try {
    return [{ index: 0, value: JSON.parse(text) as JsonValue }];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return throwDecodeError(source, 0, message, error);
  }
}

/** go-yaml v2 yields NaN/Inf for `.nan`/`.inf`; sigs.k8s.io/yaml then fails to encode them as JSON. */
function toJsonValue(value: unknown): JsonValue {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new yaml.YAMLException(`json: unsupported value: ${String(value)}`);
  }
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value !== null && typeof value === 'object') {
    const result: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value)) result[key] = toJsonValue(item);
    return result;
  }
  return (value ?? null) as JsonValue;
}

// go-yaml v2's resolve.go: which plain scalars are not strings. Only the exact spellings listed.
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'].map((s) => [s, true] as const),
  ...['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'].map(
    (s) => [s, false] as const,
  ),
]);
const NULLS: ReadonlySet<string> = new Set(['', '~', 'null', 'Null', 'NULL']);
const SPECIAL_FLOATS: ReadonlyMap<string, number> = new Map([
  ...['.nan', '.NaN', '.NAN'].map((s) => [s, Number.NaN] as const),
  ...['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'].map((s) => [s, Number.POSITIVE_INFINITY] as const),
  ...['-.inf', '-.Inf', '-.INF'].map((s) => [s, Number.NEGATIVE_INFINITY] as const),
]);
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const LEADING_DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;

/** Go's strconv.ParseInt/ParseUint with base 0 (0x, 0o, 0b prefixes; a leading 0 means octal). */
function parseGoInt(text: string): number | undefined {
  const match = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  if (match === null) return undefined;
  const [, sign = '', digits = ''] = match;
  const prefix = digits.slice(0, 2).toLowerCase();
  let magnitude: bigint;
  if (prefix === '0x' || prefix === '0o' || prefix === '0b') magnitude = BigInt(digits.toLowerCase());
  else if (digits.length > 1 && digits.startsWith('0')) magnitude = BigInt(`0o${digits.slice(1)}`);
  else magnitude = BigInt(digits);
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= -(2n ** 63n) && value < 2n ** 63n) return Number(value);
  // ParseInt failed (beyond int64); ParseUint takes unsigned text up to 2^64-1.
  if (sign === '' && value < 2n ** 64n) return Number(value);
  return undefined;
}

/** The value go-yaml v2 gives a plain scalar, or undefined when it stays a string. */
function resolvePlainScalar(text: string): { value: null | boolean | number } | undefined {
  if (NULLS.has(text)) return { value: null };
  const bool = BOOLEANS.get(text);
  if (bool !== undefined) return { value: bool };
  const special = SPECIAL_FLOATS.get(text);
  if (special !== undefined) return { value: special };
  const first = text[0];
  if (first === '.') return LEADING_DOT_FLOAT.test(text) ? { value: Number(text) } : undefined;
  if (first === undefined || !/[0-9+-]/.test(first)) return undefined;
  // Underscores are digit separators to go-yaml v2 (it strips them before parsing numbers).
  const plain = text.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return { value: int };
  if (YAML_STYLE_FLOAT.test(plain)) return { value: Number(plain) };
  return undefined;
}

function scalarType(tag: string, accepts: (value: null | boolean | number) => boolean): yaml.Type {
  return new yaml.Type(tag, {
    kind: 'scalar',
    resolve: (data: string | null) => {
      const resolved = resolvePlainScalar(data ?? '');
      return resolved !== undefined && accepts(resolved.value);
    },
    construct: (data: string | null) => resolvePlainScalar(data ?? '')?.value ?? null,
  });
}

// js-yaml ships the `<<` merge-key type (go-yaml v2 supports merge keys too) but its typings omit it.
const mergeKeyType = (yaml as unknown as { types: { merge: yaml.Type } }).types.merge;

/**
 * js-yaml schema with go-yaml v2 scalar resolution: `yes`/`on`/`y` are true, `0644` is octal 420,
 * `1_000` is 1000, `1e3` is a number, timestamps stay strings (v2 keeps them as text when decoding
 * into interface{}), and anything else is a string.
 */
const goYamlV2Schema = yaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    scalarType('tag:yaml.org,2002:null', (value) => value === null),
    scalarType('tag:yaml.org,2002:bool', (value) => typeof value === 'boolean'),
    scalarType('tag:yaml.org,2002:int', (value) => typeof value === 'number' && Number.isInteger(value)),
    scalarType('tag:yaml.org,2002:float', (value) => typeof value === 'number'),
    mergeKeyType,
  ],
});
