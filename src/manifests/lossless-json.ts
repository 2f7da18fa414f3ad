import type { JsonValue } from './json-value.js';

/**
 * JSON text ⇄ values without losing int64 integers (docs/merge-semantics.md#2-values). Go keeps an
 * integer literal that fits an int64 exact; a JS number holds integers exactly only up to 2^53. So an
 * integer literal beyond `Number.MAX_SAFE_INTEGER` but inside int64 becomes a `bigint`, and every
 * other number stays a `number`: one representation per value, so `===` still compares them.
 *
 * Node 20's `JSON.parse` shows its reviver no source text and `JSON.stringify` throws on a `bigint`
 * (there is no `JSON.rawJSON` yet), hence these two. Both keep the built-ins' speed when no such
 * integer is present: parsing looks for a 16-digit run first, serialising tries the built-in first.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The value an integer literal of JSON (or YAML) text has to Go: int64 when it fits, else float64. */
export function integerValue(digits: string): number | bigint {
  const value = BigInt(digits);
  if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(value);
  }
  return value >= INT64_MIN && value <= INT64_MAX ? value : Number(digits);
}

// A JSON string (skipped whole, so digits inside strings are left alone) or an integer literal of 16 or
// more digits where a value starts (after `:`, `[`, `,` or white space; not a fraction or an exponent).
const STRING_OR_LONG_INTEGER = /"(?:[^"\\]|\\.)*"|(?<=[:[,\s]|^)-?[0-9]{16,}(?![0-9.eE])/g;
const MARK = '\u0000int:';

/** `JSON.parse`, with int64 integers beyond 2^53 as `bigint`. Throws what `JSON.parse` throws. */
export function parseJsonLossless(text: string): unknown {
  if (!/[0-9]{16}/.test(text)) return JSON.parse(text);
  let marked = false;
  const rewritten = text.replace(STRING_OR_LONG_INTEGER, (token) => {
    if (token.startsWith('"')) return token;
    const value = integerValue(token);
    if (typeof value !== 'bigint') return token;
    marked = true;
    return `"\\u0000int:${token}"`;
  });
  if (!marked) return JSON.parse(text);
  return JSON.parse(rewritten, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(MARK) ? BigInt(value.slice(MARK.length)) : value,
  );
}

/** `JSON.stringify(value, null, space)`, writing a `bigint` as its decimal digits. */
export function stringifyJson(value: JsonValue | unknown, space?: number): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (error) {
    // A bigint, or a cycle: the pass below writes the bigints and throws the same TypeError on a cycle.
    if (!(error instanceof TypeError)) throw error;
  }
  const text = JSON.stringify(
    value,
    (_key, item: unknown) => (typeof item === 'bigint' ? `${MARK}${item.toString()}` : item),
    space,
  );
  return text.replace(/"\\u0000int:(-?[0-9]+)"/g, '$1');
}
