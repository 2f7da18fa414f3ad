import yaml from 'js-yaml';
import { GoScalar } from './go-scalar.js';
import { integerValue } from './lossless-json.js';

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

/**
 * Go's strconv.ParseInt/ParseUint with base 0 (0x, 0o, 0b prefixes; a leading 0 means octal), as the
 * value kubectl ends up with: an int64 beyond 2^53 is a `bigint` (kept exact, as Go keeps it); past
 * int64, go-yaml's uint64 becomes a float64 once kubectl decodes the JSON (`integerValue`).
 */
function parseGoInt(text: string): number | bigint | undefined {
  const match = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  if (match === null) return undefined;
  const [, sign = '', digits = ''] = match;
  const prefix = digits.slice(0, 2).toLowerCase();
  let magnitude: bigint;
  if (prefix === '0x' || prefix === '0o' || prefix === '0b') magnitude = BigInt(digits.toLowerCase());
  else if (digits.length > 1 && digits.startsWith('0')) magnitude = BigInt(`0o${digits.slice(1)}`);
  else magnitude = BigInt(digits);
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= -(2n ** 63n) && value < 2n ** 63n) return integerValue(value.toString());
  // ParseInt failed (beyond int64); ParseUint takes unsigned text up to 2^64-1.
  if (sign === '' && value < 2n ** 64n) return Number(value);
  return undefined;
}

type ScalarKind = 'null' | 'bool' | 'int' | 'float';

/** The value go-yaml v2 gives a plain scalar, and its type, or undefined when it stays a string. */
function resolvePlainScalar(
  text: string,
): { value: null | boolean | number | bigint; kind: ScalarKind } | undefined {
  if (NULLS.has(text)) return { value: null, kind: 'null' };
  const bool = BOOLEANS.get(text);
  if (bool !== undefined) return { value: bool, kind: 'bool' };
  const special = SPECIAL_FLOATS.get(text);
  if (special !== undefined) return { value: special, kind: 'float' };
  const first = text[0];
  if (first === '.') return LEADING_DOT_FLOAT.test(text) ? { value: Number(text), kind: 'float' } : undefined;
  if (first === undefined || !/[0-9+-]/.test(first)) return undefined;
  // Underscores are digit separators to go-yaml v2 (it strips them before parsing numbers).
  const plain = text.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return { value: int, kind: 'int' };
  if (YAML_STYLE_FLOAT.test(plain)) return { value: Number(plain), kind: 'float' };
  return undefined;
}

function scalarType(tag: string, kind: ScalarKind): yaml.Type {
  return new yaml.Type(tag, {
    kind: 'scalar',
    resolve: (data: string | null) => resolvePlainScalar(data ?? '')?.kind === kind,
    // Wrapped until toJsonValue, so that as a key it keeps its Go type and kubectl's spelling.
    construct: (data: string | null) => new GoScalar(kind, resolvePlainScalar(data ?? '')?.value ?? null),
  });
}

/**
 * `!!float`: go-yaml v2's resolve turns an integer tagged `!!float` (`!!float 3`, `!!float "0x10"`)
 * into a float64, the one conversion it makes for an explicit tag; kubectl reads 3. js-yaml asks a
 * tag's type to resolve the text whether the tag was written or implied, so the float type takes an
 * integer's text too: implied, an integer never reaches it (the int type is tried first).
 */
const floatType = new yaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: string | null) => {
    const kind = resolvePlainScalar(data ?? '')?.kind;
    return kind === 'float' || kind === 'int';
  },
  construct: (data: string | null) =>
    new GoScalar('float', Number(resolvePlainScalar(data ?? '')?.value ?? Number.NaN)),
});

/**
 * `!!binary`: go-yaml v2 decodes the base64 text to bytes, and sigs.k8s.io/yaml hands kubectl those
 * bytes as a string (invalid UTF-8 becomes U+FFFD when it is encoded as JSON, as Buffer does here).
 */
const binaryType = new yaml.Type('tag:yaml.org,2002:binary', {
  kind: 'scalar',
  resolve: (data: string | null) => /^[A-Za-z0-9+/=\s]*$/.test(data ?? ''),
  construct: (data: string | null) =>
    Buffer.from((data ?? '').replace(/\s+/g, ''), 'base64').toString('utf8'),
});

// js-yaml ships the `<<` merge-key type (go-yaml v2 supports merge keys too) but its typings omit it.
const mergeKeyType = (yaml as unknown as { types: { merge: yaml.Type } }).types.merge;

/**
 * js-yaml schema with go-yaml v2 scalar resolution: `yes`/`on`/`y` are true, `0644` is octal 420,
 * `1_000` is 1000, `1e3` is a number, timestamps stay strings (v2 keeps them as text when decoding
 * into interface{}), and anything else is a string.
 */
export const goYamlV2Schema = yaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    scalarType('tag:yaml.org,2002:null', 'null'),
    scalarType('tag:yaml.org,2002:bool', 'bool'),
    scalarType('tag:yaml.org,2002:int', 'int'),
    floatType,
    mergeKeyType,
  ],
  explicit: [binaryType],
});
