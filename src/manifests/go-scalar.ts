import type { JsonObject, JsonValue } from './json-value.js';

/**
 * A plain YAML scalar that go-yaml v2 decodes to something other than a string (an int, a float, a
 * bool or nil), as js-yaml hands it over until `toJsonValue` unwraps it.
 *
 * Why a wrapper: js-yaml turns every mapping key into text with `String()`, so `1_000:` (an int to
 * go-yaml) and `1e3:` (a float) would become one key "1000", and so would `on:` and `"true":`. In
 * go-yaml they are two keys of a Go map, and sigs.k8s.io/yaml then writes both to the JSON key
 * "1000" in Go's random map order: kubectl keeps one or the other from run to run. As a key this
 * wrapper becomes a text that carries its Go type (`keyOf`), so keys go-yaml keeps apart stay apart
 * here too, and `toJsonValue` refuses a mapping whose keys would collide. Keys go-yaml merges (`on:`
 * and `yes:`, both the bool true) merge here as well: the later one wins, in both.
 */
export class GoScalar {
  readonly #kind: GoScalarKind;
  readonly #value: null | boolean | number | bigint;

  constructor(kind: GoScalarKind, value: null | boolean | number | bigint) {
    this.#kind = kind;
    this.#value = value;
  }

  get kind(): GoScalarKind {
    return this.#kind;
  }

  get value(): null | boolean | number | bigint {
    return this.#value;
  }

  /** The key js-yaml stores for this scalar (see `readKey`). */
  toString(): string {
    return `${TYPED_KEY_MARK}${this.#kind}${TYPED_KEY_MARK}${keyText(this.#kind, this.#value)}`;
  }

  // js-yaml turns a plain object used as a key into "[object Object]"; this one is not plain.
  get [Symbol.toStringTag](): string {
    return 'GoScalar';
  }
}

export type GoScalarKind = 'int' | 'float' | 'bool' | 'null';

// A NUL cannot appear raw in YAML, and a key quoted with a "\0" escape that imitates this is
// at worst refused.
const TYPED_KEY_MARK = '\u0000';

/** The text sigs.k8s.io/yaml gives a key of this type (nil has none: kubectl refuses it). */
function keyText(kind: GoScalarKind, value: null | boolean | number | bigint): string {
  if (kind === 'float') return formatGoFloatKey(value as number);
  return String(value);
}

/** A key as js-yaml stored it: its JSON text and the Go type it had, `string` for a string. */
export function readKey(stored: string): { readonly text: string; readonly kind: GoScalarKind | 'string' } {
  if (!stored.startsWith(TYPED_KEY_MARK)) return { text: stored, kind: 'string' };
  const end = stored.indexOf(TYPED_KEY_MARK, 1);
  if (end < 0) return { text: stored, kind: 'string' };
  return { text: stored.slice(end + 1), kind: stored.slice(1, end) as GoScalarKind };
}

/** Why a mapping's key cannot be a JSON key for kubectl, in go-yaml's and sigs.k8s.io/yaml's words. */
class YamlKeyError extends Error {
  override readonly name = 'YamlKeyError';
}

const KIND_NAMES: Readonly<Record<GoScalarKind | 'string', string>> = {
  string: 'a string',
  int: 'an integer',
  float: 'a float',
  bool: 'a boolean',
  null: 'null',
};

/**
 * The JSON object of a decoded mapping, as sigs.k8s.io/yaml builds it: each key as its text, each
 * value through `convert`. A nil key is refused as kubectl refuses it; two keys of different Go types
 * with one text are refused, where kubectl would keep either at random.
 */
export function mappingToJson(
  mapping: object,
  path: string,
  convert: (value: unknown, path: string) => JsonValue,
): JsonObject {
  const result: Record<string, JsonValue> = {};
  const kinds = new Map<string, GoScalarKind | 'string'>();
  for (const [stored, item] of Object.entries(mapping)) {
    const { text, kind } = readKey(stored);
    if (kind === 'null') {
      throw new YamlKeyError(
        `unsupported map key of type: <nil>${where(path)} (a key written ~, null or empty)`,
      );
    }
    const earlier = kinds.get(text);
    if (earlier !== undefined && earlier !== kind) {
      throw new YamlKeyError(
        `two keys ${JSON.stringify(text)}${where(path)}, one ${KIND_NAMES[earlier]} and one ` +
          `${KIND_NAMES[kind]} to YAML 1.1 (e.g. 1_000 and 1e3, on and "true"): kubectl keeps one of ` +
          `them at random; keep one key`,
      );
    }
    kinds.set(text, kind);
    result[text] = convert(item, path === '' ? text : `${path}.${text}`);
  }
  return result;
}

function where(path: string): string {
  return path === '' ? ' at the top of the document' : ` in ${path}`;
}

/**
 * Go's strconv.FormatFloat(value, 'g', -1, 32), as sigs.k8s.io/yaml spells float keys.
 * @internal test seam: a pure step its unit test runs alone
 */
export function formatGoFloatKey(value: number): string {
  const single = Math.fround(value);
  if (Number.isNaN(single)) return '.nan';
  if (single === Number.POSITIVE_INFINITY) return '.inf';
  if (single === Number.NEGATIVE_INFINITY) return '-.inf';
  if (single === 0) return Object.is(single, -0) ? '-0' : '0';
  const sign = single < 0 ? '-' : '';
  const magnitude = Math.abs(single);
  // The shortest digits that read back as the same 32-bit float, as Go's shortest formatting finds.
  let digits = '';
  let exponent = 0;
  for (let precision = 1; precision <= 9; precision += 1) {
    const text = magnitude.toExponential(precision - 1);
    if (Math.fround(Number(text)) !== magnitude) continue;
    const [mantissa = '', power = '0'] = text.split('e');
    digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
    exponent = Number(power);
    break;
  }
  // %e when the exponent is below -4 or at least 6 (Go's rule for the shortest precision).
  if (exponent < -4 || exponent >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const power = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${power}`;
  }
  const point = exponent + 1;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
