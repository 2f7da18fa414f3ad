import type { JsonValue } from '../manifests/json-value.js';
import { compareGoStrings } from './go-value.js';

// Go's encoding/json escapes these for safe embedding in HTML
// (docs/merge-semantics.md#11-the-last-applied-annotation).
const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
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
 */
export function encodeGoJson(value: JsonValue): string {
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
  if (Array.isArray(value)) return `[${value.map(encodeGoJson).join(',')}]`;
  const keys = Object.keys(value).sort(compareGoStrings);
  const members = keys.map((key) => `${encodeString(key)}:${encodeGoJson(value[key] as JsonValue)}`);
  return `{${members.join(',')}}`;
}

function encodeString(text: string): string {
  return JSON.stringify(text).replace(HTML_UNSAFE, (char) => HTML_ESCAPES[char] ?? char);
}
