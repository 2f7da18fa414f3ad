import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { applyRetainKeys } from './apply-retain-keys.js';
import {
  normalizeElementOrder,
  partitionByPresence,
  validatePatchWithSetOrderList,
} from './element-order.js';
import { goDeepEqual, goKind, goMapString, goScalarEqual } from './go-value.js';
import { deduplicateScalars, mergeKeyValue, sliceElementKind } from './list-elements.js';
import { MergeError } from './merge-error.js';
import {
  DELETE_FROM_PRIMITIVE_LIST_PREFIX,
  DIRECTIVE_MARKER,
  SET_ELEMENT_ORDER_PREFIX,
  extractDirectiveKey,
  removeDirectives,
  type MergeMode,
} from './patch-directives.js';
import { splitRetainKeys, type PatchMeta } from './patch-meta.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * Merges `patch` into `target` in place and returns the result, like apimachinery's mergeMap. Both
 * arguments must be private copies: the Go code's in-place list edits are reproduced on purpose,
 * because the server's element order depends on them (the aliasing quirk,
 * docs/merge-semantics.md#72-element-order).
 */
export function mergeMap(
  target: JsonObject | null,
  patch: JsonObject,
  meta: PatchMeta,
  mode: MergeMode,
): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE_MARKER)) {
    const directive = patch[DIRECTIVE_MARKER];
    if (directive === 'replace') {
      delete patch[DIRECTIVE_MARKER];
      return patch;
    }
    if (directive === 'delete') return {};
    throw new MergeError(
      'bad-patch',
      `unknown patch type: ${String(directive)} in map: ${goMapString(patch)}`,
    );
  }
  const original = target ?? {};
  applyRetainKeys(original, patch, mode);
  mergeSetElementOrderLists(original, patch, meta, mode);

  for (const patchKey of Object.keys(patch)) {
    let key = patchKey;
    const patchValue = patch[patchKey] as JsonValue;
    let isDeleteList = false;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)) {
      if (mode === 'client') {
        original[key] = patchValue;
        continue;
      }
      key = extractDirectiveKey(key, DELETE_FROM_PRIMITIVE_LIST_PREFIX);
      isDeleteList = true;
    }
    if (patchValue === null) {
      delete original[key];
      if (mode === 'server') continue;
    }
    if (!Object.hasOwn(original, key) || goKind(original[key] as JsonValue) !== goKind(patchValue)) {
      if (!isDeleteList) setWithoutDirectives(original, key, patchValue, mode);
      continue;
    }
    const originalValue = original[key] as JsonValue;
    if (isJsonObject(originalValue)) {
      const field = meta.lookupObjectField(key);
      const { strategy } = splitRetainKeys(field.strategies);
      original[key] =
        strategy === 'replace'
          ? patchValue
          : mergeMap(originalValue, patchValue as JsonObject, field.meta, mode);
    } else if (Array.isArray(originalValue)) {
      const field = meta.lookupListField(key);
      const { strategy } = splitRetainKeys(field.strategies);
      original[key] =
        strategy === 'merge' || isDeleteList
          ? mergeSlice(
              originalValue,
              patchValue as JsonValue[],
              field.meta,
              field.mergeKey,
              mode,
              isDeleteList,
            )
          : (patchValue as JsonValue[]);
    } else {
      setWithoutDirectives(original, key, patchValue, mode);
    }
  }
  return original;
}

function setWithoutDirectives(target: JsonObject, key: string, value: JsonValue, mode: MergeMode): void {
  if (mode === 'server') discardNullValues(value);
  const { value: cleaned, keep } = removeDirectives(value);
  if (keep) target[key] = cleaned;
  else delete target[key];
}

/** The server strips nulls from any value a patch adds (U42, S11); not inside lists of scalars. */
function discardNullValues(value: JsonValue): void {
  if (Array.isArray(value)) {
    for (const item of value) discardNullValues(item);
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      const item = value[key] as JsonValue;
      if (item === null) delete value[key];
      else discardNullValues(item);
    }
  }
}

function mergeSetElementOrderLists(
  original: JsonObject,
  patch: JsonObject,
  meta: PatchMeta,
  mode: MergeMode,
): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
    const order = patch[directiveKey] as JsonValue;
    if (mode === 'client') {
      if (Object.hasOwn(original, directiveKey)) {
        if (!goDeepEqual(original[directiveKey], order)) {
          throw new MergeError('set-element-order-mismatch', 'invalid patch format of setElementOrder list');
        }
      } else {
        original[directiveKey] = order;
      }
    }
    delete patch[directiveKey];
    if (!Array.isArray(order))
      throw new MergeError('bad-patch', 'invalid patch format of setElementOrder list');
    const key = extractDirectiveKey(directiveKey, SET_ELEMENT_ORDER_PREFIX);
    const foundOriginal = Object.hasOwn(original, key);
    const foundPatch = Object.hasOwn(patch, key);
    const originalList = foundOriginal ? expectList(original[key] as JsonValue) : [];
    const patchList = foundPatch ? expectList(patch[key] as JsonValue) : [];
    const field = meta.lookupListField(key);
    const { strategy } = splitRetainKeys(field.strategies);
    validatePatchWithSetOrderList(patchList, order, field.mergeKey);

    let merged: JsonValue[];
    if (foundOriginal && !foundPatch) {
      merged = originalList;
    } else if (!foundOriginal && foundPatch) {
      const result = removeDirectives(patchList);
      if (!result.keep) continue;
      merged = result.value as JsonValue[];
    } else if (foundOriginal && foundPatch) {
      merged =
        strategy === 'merge'
          ? mergeSlice(originalList, patchList, field.meta, field.mergeKey, mode, false)
          : patchList;
    } else {
      continue;
    }
    const isMapList = field.mergeKey !== '';
    const { inList, notInList } = partitionByPresence(merged, order, field.mergeKey, isMapList);
    const kind = sliceElementKind(originalList, patchList);
    original[key] = normalizeElementOrder(inList, notInList, order, originalList, field.mergeKey, kind);
    delete patch[key];
  }
}

function expectList(value: JsonValue): JsonValue[] {
  if (!Array.isArray(value))
    throw new MergeError('bad-patch', `expected a list, but got ${stringifyJson(value)}`);
  return value;
}

/**
 * apimachinery mergeSlice. `original` is treated as a Go slice whose capacity is its length: deleting
 * shifts its elements left in place and the first appends land in the freed tail, exactly the
 * backing-array edits the Go code makes. Callers that later read `original` (as the live order)
 * therefore see what the Go code sees.
 */
function mergeSlice(
  original: JsonValue[],
  patch: JsonValue[],
  meta: PatchMeta,
  mergeKey: string,
  mode: MergeMode,
  isDeleteList: boolean,
): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let liveOrder: JsonValue[];
  let merged: JsonValue[];
  let patchItems = patch;
  if (kind !== 'map') {
    if (mode === 'server' && isDeleteList) {
      return original.filter((item) => !patch.some((value) => goScalarEqual(value, item)));
    }
    merged = deduplicateScalars([...original, ...patch]);
    liveOrder = original;
  } else {
    if (mergeKey === '')
      throw new MergeError('bad-patch', `cannot merge lists without merge key for ${meta.name}`);
    const slice = new GoSlice(original);
    const special = applySpecialElements(slice, patch, mergeKey);
    if (special.replace) {
      liveOrder = special.rest;
      patchItems = [];
      merged = special.rest;
    } else {
      patchItems = special.rest;
      liveOrder = slice.view();
      merged = mergeWithoutSpecialElements(slice.copy(), patchItems, mergeKey, meta, mode);
    }
  }
  const isMapList = mergeKey !== '';
  const { inList, notInList } = partitionByPresence(merged, patchItems, mergeKey, isMapList);
  return normalizeElementOrder(inList, notInList, patchItems, liveOrder, mergeKey, kind);
}

/** A Go slice over a backing array: writes through `view` are visible to everyone holding `array`. */
class GoSlice {
  length: number;
  constructor(public array: JsonValue[]) {
    this.length = array.length;
  }
  view(): JsonValue[] {
    return this.array.slice(0, this.length);
  }
  /** A second slice header sharing this backing array, as passing a slice by value does. */
  copy(): GoSlice {
    const other = new GoSlice(this.array);
    other.length = this.length;
    return other;
  }
  removeAt(index: number): void {
    // append(s[:i], s[i+1:]...): shift left in place; the last slot keeps a stale value.
    for (let i = index; i < this.length - 1; i++) this.array[i] = this.array[i + 1] as JsonValue;
    this.length--;
  }
  append(value: JsonValue): void {
    if (this.length >= this.array.length) this.array = this.array.slice(0, this.length);
    if (this.length < this.array.length) this.array[this.length] = value;
    else this.array.push(value);
    this.length++;
  }
}

function applySpecialElements(
  slice: GoSlice,
  patch: readonly JsonValue[],
  mergeKey: string,
): { replace: boolean; rest: JsonValue[] } {
  const rest: JsonValue[] = [];
  let replace = false;
  for (const item of patch) {
    const element = item as JsonObject;
    if (!Object.hasOwn(element, DIRECTIVE_MARKER)) {
      rest.push(item);
      continue;
    }
    const directive = element[DIRECTIVE_MARKER];
    if (directive === 'delete') {
      const value = mergeKeyValue(element, mergeKey);
      for (;;) {
        const index = findByKey(slice.view(), mergeKey, value);
        if (index < 0) break;
        slice.removeAt(index);
      }
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw new MergeError('bad-patch', 'merging lists cannot yet be specified in the patch');
    } else {
      throw new MergeError(
        'bad-patch',
        `unknown patch type: ${String(directive)} in map: ${goMapString(element)}`,
      );
    }
  }
  return { replace, rest };
}

function findByKey(list: readonly JsonValue[], mergeKey: string, value: JsonValue): number {
  for (let i = 0; i < list.length; i++) {
    const candidate = list[i] as JsonValue;
    if (!isJsonObject(candidate))
      throw new MergeError('bad-list-elements', `value for key ${i} is not a map`);
    if (Object.hasOwn(candidate, mergeKey) && goScalarEqual(candidate[mergeKey], value)) return i;
  }
  return -1;
}

function mergeWithoutSpecialElements(
  slice: GoSlice,
  patch: readonly JsonValue[],
  mergeKey: string,
  meta: PatchMeta,
  mode: MergeMode,
): JsonValue[] {
  for (const item of patch) {
    const element = item as JsonObject;
    const value = mergeKeyValue(element, mergeKey);
    const index = findByKey(slice.view(), mergeKey, value);
    if (index >= 0) {
      slice.array[index] = mergeMap(slice.array[index] as JsonObject, element, meta, mode);
    } else {
      slice.append(element);
    }
  }
  return slice.view();
}
