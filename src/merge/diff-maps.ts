import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { normalizeSliceOrder } from './element-order.js';
import {
  compareGoStrings,
  goDeepEqual,
  goKind,
  goScalarEqual,
  goSortByString,
  goString,
} from './go-value.js';
import { deduplicateScalars, mergeKeyValue, sliceElementKind } from './list-elements.js';
import { MergeError } from './merge-error.js';
import {
  DELETE_FROM_PRIMITIVE_LIST_PREFIX,
  DIRECTIVE_MARKER,
  RETAIN_KEYS_DIRECTIVE,
  SET_ELEMENT_ORDER_PREFIX,
} from './patch-directives.js';
import { splitRetainKeys, type PatchMeta } from './patch-meta.js';

export interface DiffOptions {
  readonly ignoreChangesAndAdditions: boolean;
  readonly ignoreDeletions: boolean;
  readonly setElementOrder: boolean;
  /** Set per field from its `retainKeys` strategy, never by callers. */
  readonly buildRetainKeys?: boolean;
}

/**
 * The two-way strategic diff from `from` to `to` (apimachinery's diffMaps;
 * docs/merge-semantics.md#6-the-two-way-diff).
 * Works like the Go code, including its one side effect that matters for the output: lists of
 * scalars of `from` are sorted in place (section 6.2). Callers pass private copies.
 */
export function diffMaps(
  from: JsonObject,
  to: JsonObject,
  meta: PatchMeta,
  options: DiffOptions,
): JsonObject {
  const patch: JsonObject = {};
  const retainKeys: string[] = [];
  for (const key of Object.keys(to)) {
    const toValue = to[key] as JsonValue;
    if (options.buildRetainKeys === true && toValue !== null) retainKeys.push(key);
    if (!Object.hasOwn(from, key)) {
      if (!options.ignoreChangesAndAdditions) patch[key] = toValue;
      continue;
    }
    const fromValue = from[key] as JsonValue;
    if (key === DIRECTIVE_MARKER) {
      if (typeof fromValue !== 'string' || typeof toValue !== 'string') {
        throw new MergeError('bad-patch', `invalid value for special key: ${DIRECTIVE_MARKER}`);
      }
      if (fromValue !== toValue) patch[key] = toValue;
      continue;
    }
    if (goKind(fromValue) !== goKind(toValue)) {
      if (!options.ignoreChangesAndAdditions) patch[key] = toValue;
      continue;
    }
    if (isJsonObject(fromValue)) {
      diffObjectField(key, fromValue, toValue as JsonObject, patch, meta, options);
    } else if (Array.isArray(fromValue)) {
      diffListField(key, fromValue, toValue as JsonValue[], patch, meta, options);
    } else if (!options.ignoreChangesAndAdditions && !goDeepEqual(fromValue, toValue)) {
      patch[key] = toValue;
    }
  }
  if (!options.ignoreDeletions) {
    for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) patch[key] = null;
  }
  if (retainKeys.length > 0 && (Object.keys(patch).length > 0 || hasExtraNonNullKey(from, to))) {
    patch[RETAIN_KEYS_DIRECTIVE] = goSortByString(retainKeys, (key) => key);
  }
  return patch;
}

/**
 * A field's patch metadata, or undefined when the lookup fails for a field that did not change: an
 * unknown field only matters when it changed (apimachinery handleMapDiff).
 */
function lookupUnlessUnchanged<T>(lookup: () => T, from: JsonValue, to: JsonValue): T | undefined {
  try {
    return lookup();
  } catch (error) {
    if (goDeepEqual(from, to)) return undefined;
    throw error;
  }
}

function diffObjectField(
  key: string,
  from: JsonObject,
  to: JsonObject,
  patch: JsonObject,
  meta: PatchMeta,
  options: DiffOptions,
): void {
  const field = lookupUnlessUnchanged(() => meta.lookupObjectField(key), from, to);
  if (field === undefined) return;
  const { retainKeys, strategy } = splitRetainKeys(field.strategies);
  if (strategy === 'replace') {
    // No equality check: a replace-strategy object is in every delta (K45).
    if (!options.ignoreChangesAndAdditions) patch[key] = to;
    return;
  }
  const sub = diffMaps(from, to, field.meta, { ...options, buildRetainKeys: retainKeys });
  if (Object.keys(sub).length > 0) patch[key] = sub;
}

function diffListField(
  key: string,
  from: JsonValue[],
  to: JsonValue[],
  patch: JsonObject,
  meta: PatchMeta,
  options: DiffOptions,
): void {
  const field = lookupUnlessUnchanged(() => meta.lookupListField(key), from, to);
  if (field === undefined) return;
  const { retainKeys, strategy } = splitRetainKeys(field.strategies);
  if (strategy !== 'merge') {
    if (!options.ignoreChangesAndAdditions && !goDeepEqual(from, to)) patch[key] = to;
    return;
  }
  const { add, remove, order } = diffLists(from, to, field.meta, field.mergeKey, {
    ...options,
    buildRetainKeys: retainKeys,
  });
  if (add.length > 0) patch[key] = add;
  if (remove.length > 0) patch[`${DELETE_FROM_PRIMITIVE_LIST_PREFIX}/${key}`] = remove;
  if (order.length > 0) patch[`${SET_ELEMENT_ORDER_PREFIX}/${key}`] = order;
}

interface ListDiff {
  readonly add: JsonValue[];
  readonly remove: JsonValue[];
  readonly order: JsonValue[];
}

function diffLists(
  from: JsonValue[],
  to: JsonValue[],
  meta: PatchMeta,
  mergeKey: string,
  options: DiffOptions,
): ListDiff {
  if (from.length === 0) {
    // The whole target list, without $setElementOrder (docs/merge-semantics.md#62-lists-of-primitives).
    if (to.length === 0 || options.ignoreChangesAndAdditions) return { add: [], remove: [], order: [] };
    return { add: to, remove: [], order: [] };
  }
  const kind = sliceElementKind(from, to);
  if (kind === 'map') {
    const { patchList, deleteList } = diffListsOfMaps(from, to, meta, mergeKey, options);
    const ordered = [...normalizeSliceOrder(patchList, to, mergeKey, true), ...deleteList];
    const orderSame = isOrderSame(from, to, mergeKey);
    let order: JsonValue[] = [];
    if (
      options.setElementOrder &&
      ((!options.ignoreChangesAndAdditions && (ordered.length > 0 || !orderSame)) ||
        (!options.ignoreDeletions && ordered.length > 0))
    ) {
      order = to.map((item) => ({ [mergeKey]: (item as JsonObject)[mergeKey] as JsonValue }));
    }
    return { add: ordered, remove: [], order };
  }
  const { add, remove } = diffListsOfScalars(from, to, options);
  const ordered = normalizeSliceOrder(add, to, '', false);
  let order: JsonValue[] = [];
  // `from` is sorted in place by now, so this compares the sorted live list with the file's
  // (docs/merge-semantics.md#62-lists-of-primitives).
  if (
    options.setElementOrder &&
    ((!options.ignoreDeletions && remove.length > 0) ||
      (!options.ignoreChangesAndAdditions && !goDeepEqual(from, to)))
  ) {
    order = to;
  }
  return { add: ordered, remove, order };
}

function isOrderSame(from: readonly JsonValue[], to: readonly JsonValue[], mergeKey: string): boolean {
  if (from.length !== to.length) return false;
  for (let i = 0; i < to.length; i++) {
    if (
      !goScalarEqual(
        mergeKeyValue(from[i] as JsonValue, mergeKey),
        mergeKeyValue(to[i] as JsonValue, mergeKey),
      )
    ) {
      return false;
    }
  }
  return true;
}

function diffListsOfScalars(
  from: JsonValue[],
  to: readonly JsonValue[],
  options: DiffOptions,
): { add: JsonValue[]; remove: JsonValue[] } {
  // In place, as sortScalars(original) does in Go; diffLists relies on it.
  const sortedFrom = goSortByString(from, goString);
  from.splice(0, from.length, ...sortedFrom);
  const sortedTo = goSortByString(to, goString);
  const add: JsonValue[] = [];
  const remove: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < sortedFrom.length || j < sortedTo.length) {
    const fromIn = i < sortedFrom.length;
    const toIn = j < sortedTo.length;
    const a = fromIn ? goString(sortedFrom[i] as JsonValue) : '';
    const b = toIn ? goString(sortedTo[j] as JsonValue) : '';
    if (fromIn && toIn && a === b) {
      i++;
      j++;
    } else if (!fromIn || (toIn && compareGoStrings(a, b) > 0)) {
      if (!options.ignoreChangesAndAdditions) add.push(sortedTo[j] as JsonValue);
      j++;
    } else {
      if (!options.ignoreDeletions) remove.push(sortedFrom[i] as JsonValue);
      i++;
    }
  }
  return { add, remove: deduplicateScalars(remove) };
}

function diffListsOfMaps(
  from: readonly JsonValue[],
  to: readonly JsonValue[],
  meta: PatchMeta,
  mergeKey: string,
  options: DiffOptions,
): { patchList: JsonValue[]; deleteList: JsonValue[] } {
  const patchList: JsonValue[] = [];
  const deleteList: JsonValue[] = [];
  const fromSorted = sortByMergeKey(from, mergeKey);
  const toSorted = sortByMergeKey(to, mergeKey);
  let i = 0;
  let j = 0;
  while (i < fromSorted.length || j < toSorted.length) {
    const fromIn = i < fromSorted.length;
    const toIn = j < toSorted.length;
    const a = fromIn ? (fromSorted[i] as JsonObject) : undefined;
    const b = toIn ? (toSorted[j] as JsonObject) : undefined;
    const aKey = a === undefined ? '' : goString(a[mergeKey]);
    const bKey = b === undefined ? '' : goString(b[mergeKey]);
    const order = compareGoStrings(aKey, bKey);
    if (a !== undefined && b !== undefined && order === 0) {
      const sub = diffMaps(a, b, meta, options);
      if (Object.keys(sub).length > 0) {
        sub[mergeKey] = b[mergeKey] as JsonValue;
        patchList.push(sub);
      }
      i++;
      j++;
    } else if (a === undefined || (b !== undefined && order > 0)) {
      if (!options.ignoreChangesAndAdditions) patchList.push(b as JsonObject);
      j++;
    } else {
      if (!options.ignoreDeletions) {
        deleteList.push({ [mergeKey]: a[mergeKey] as JsonValue, [DIRECTIVE_MARKER]: 'delete' });
      }
      i++;
    }
  }
  return { patchList, deleteList };
}

/** Sorts a merge list by the string form of its merge key, checking every element has the key. */
function sortByMergeKey(list: readonly JsonValue[], mergeKey: string): JsonValue[] {
  for (const item of list) mergeKeyValue(item, mergeKey);
  return goSortByString(list, (item) => goString((item as JsonObject)[mergeKey]));
}

/** Whether `from` has a key with a non-null value that `to` lacks: a sibling $retainKeys must clear. */
function hasExtraNonNullKey(from: JsonObject, to: JsonObject): boolean {
  return Object.keys(from).some((key) => from[key] !== null && !Object.hasOwn(to, key));
}
