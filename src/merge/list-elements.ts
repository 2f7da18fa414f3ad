import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import { goKind, goMapString, goScalarEqual, type GoKind } from './go-value.js';
import { MergeError } from './merge-error.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * The checks and helpers on list elements that both the diff and the merge need, with the refusals
 * apimachinery makes (docs/merge-semantics.md#63-lists-of-maps).
 */

/** apimachinery sliceElementType: every element of every list must share one dynamic type. */
export function sliceElementKind(...lists: readonly (readonly JsonValue[])[]): GoKind {
  let kind: GoKind | undefined;
  for (const list of lists) {
    for (const item of list) {
      const current = goKind(item);
      if (kind === undefined) {
        if (current === 'slice')
          throw new MergeError('bad-list-elements', 'lists of lists are not supported');
        kind = current;
      } else if (kind !== current) {
        throw new MergeError(
          'bad-list-elements',
          `list element types are not identical: ${stringifyJson(lists)}`,
        );
      }
    }
  }
  if (kind === undefined) throw new MergeError('bad-list-elements', 'no elements in any of the given slices');
  return kind;
}

/** Go's swap-with-last dedupe (typed equality); it reorders only when duplicates exist. */
export function deduplicateScalars(values: JsonValue[]): JsonValue[] {
  const s = [...values];
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (goScalarEqual(s[i], s[j])) {
        s[j] = s[length] as JsonValue;
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

/**
 * The merge-key value of a list element; an element without it fails the whole computation
 * (docs/merge-semantics.md#63-lists-of-maps).
 */
export function mergeKeyValue(item: JsonValue, mergeKey: string): JsonValue {
  if (mergeKey === '') return item;
  if (!isJsonObject(item)) {
    throw new MergeError('bad-list-elements', `expected a map, but got ${stringifyJson(item)}`);
  }
  if (!Object.hasOwn(item, mergeKey)) {
    throw new MergeError(
      'missing-merge-key',
      `map: ${goMapString(item)} does not contain declared merge key: ${mergeKey}`,
    );
  }
  return item[mergeKey] as JsonValue;
}
