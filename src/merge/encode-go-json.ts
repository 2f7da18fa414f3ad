import type { JsonObject, JsonValue } from '../manifests/json-value.js';
import { compareGoStrings } from './go-value.js';

// Go's encoding/json escapes these for safe embedding in HTML
// (docs/merge-semantics.md#11-the-last-applied-annotation).
const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
// Not global: a global RegExp's test() moves its lastIndex, and the next text would be read from there.
const HAS_HTML_UNSAFE = /[<>&\u2028\u2029]/;
const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/**
 * Serialises a value byte for byte as Go's `json.Marshal` does for `map[string]interface{}`: keys
 * sorted bytewise, compact, `<>&` and U+2028/2029 escaped. kubectl writes both the patch and the
 * last-applied annotation this way, and "unchanged" is decided by comparing the patch text with `{}`.
 * Numbers print as JSON.stringify prints them, which matches Go for int64 and float64 alike; a
 * `bigint` (an int64 beyond 2^53) prints its digits.
 *
 * The usual value is copied with its keys in Go's order and written by one JSON.stringify, a third
 * of the time of writing it piece by piece. A JS object lists integer-like keys ("0", "10") first, in
 * numeric order, whatever order they were added in, and JSON.stringify refuses a `bigint`: a value
 * with either is written piece by piece.
 */
export function encodeGoJson(value: JsonValue): string {
  const ordered = inGoOrder(value);
  if (ordered === UNORDERED) return encodeByParts(value);
  const text = JSON.stringify(ordered);
  // Outside strings JSON has none of these characters, so the whole text is escaped at once.
  return HAS_HTML_UNSAFE.test(text) ? text.replace(HTML_UNSAFE, escapeHtml) : text;
}

const UNORDERED = Symbol('unordered');
const INTEGER_LIKE = /^(?:0|[1-9][0-9]*)$/;

/** A copy whose objects list their keys in Go's order, or UNORDERED (see encodeGoJson). */
function inGoOrder(value: JsonValue): JsonValue | typeof UNORDERED {
  if (typeof value === 'bigint') return UNORDERED;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items: JsonValue[] = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = inGoOrder(value[i] as JsonValue);
      if (item === UNORDERED) return UNORDERED;
      items[i] = item;
    }
    return items;
  }
  // No prototype, so a `__proto__` key is a member like any other.
  const copy = Object.create(null) as JsonObject;
  for (const key of Object.keys(value).sort(compareGoStrings)) {
    if (INTEGER_LIKE.test(key)) return UNORDERED;
    const member = inGoOrder(value[key] as JsonValue);
    if (member === UNORDERED) return UNORDERED;
    copy[key] = member;
  }
  return copy;
}

function encodeByParts(value: JsonValue): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return encodeString(value);
    case 'number':
      // Go has no NaN/Inf in JSON; they cannot come from decoded documents.
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    default:
      break;
  }
  if (Array.isArray(value)) return `[${value.map(encodeByParts).join(',')}]`;
  const keys = Object.keys(value).sort(compareGoStrings);
  const members = keys.map((key) => `${encodeString(key)}:${encodeByParts(value[key] as JsonValue)}`);
  return `{${members.join(',')}}`;
}

function escapeHtml(char: string): string {
  return HTML_ESCAPES[char] ?? char;
}

function encodeString(text: string): string {
  return JSON.stringify(text).replace(HTML_UNSAFE, escapeHtml);
}
