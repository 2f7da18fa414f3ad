import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import { MergeError } from './merge-error.js';

/** The reserved keys of a strategic merge patch (docs/merge-semantics.md#7-patch-directives). */
export const DIRECTIVE_MARKER = '$patch';
export const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
export const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
export const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

/**
 * The two ways apimachinery's mergeMap runs: the API server applying a patch (`server`: deletion
 * lists applied, unmatched nulls dropped; docs/merge-semantics.md#71-applying-a-patch-on-the-server)
 * and kubectl combining its deletions and delta patches (`client`: directives carried over, nulls
 * kept; docs/merge-semantics.md#5-combining-and-conflicts).
 */
export type MergeMode = 'server' | 'client';

/**
 * apimachinery extractKey: the field a `$deleteFromPrimitiveList/<f>` or `$setElementOrder/<f>` key
 * names, refused in apimachinery's words when the key is malformed.
 */
export function extractDirectiveKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw new MergeError(
      'bad-patch',
      prefix === SET_ELEMENT_ORDER_PREFIX
        ? 'invalid patch format of setElementOrder list'
        : 'invalid patch format of primitive list',
    );
  }
  return key.slice(slash + 1);
}

/** apimachinery removeDirectives: drops any map carrying `$patch` from a value being copied in. */
export function removeDirectives(value: JsonValue): { value: JsonValue; keep: boolean } {
  if (Array.isArray(value)) {
    const kept: JsonValue[] = [];
    for (const item of value) {
      const result = removeDirectives(item);
      if (result.keep) kept.push(result.value);
    }
    return { value: kept, keep: true };
  }
  if (isJsonObject(value)) {
    if (Object.hasOwn(value, DIRECTIVE_MARKER)) return { value: null, keep: false };
    for (const key of Object.keys(value)) {
      const result = removeDirectives(value[key] as JsonValue);
      if (result.keep) value[key] = result.value;
      else delete value[key];
    }
  }
  return { value, keep: true };
}
