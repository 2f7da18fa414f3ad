import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { goScalarEqual, type GoKind } from './go-value.js';
import { mergeKeyValue } from './list-elements.js';
import { MergeError } from './merge-error.js';
import { DIRECTIVE_MARKER, SET_ELEMENT_ORDER_PREFIX } from './patch-directives.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * The order of list elements in a diff and after a merge, as apimachinery computes it
 * (docs/merge-semantics.md#72-element-order): the patch's items follow the patch (or its
 * `$setElementOrder`), the server's own items are interleaved by their live position.
 */

/**
 * apimachinery normalizeSliceOrder: a stable sort of `items` by their position in `order` (by merge
 * key for objects), with `$patch: delete` items moved to the end.
 */
export function normalizeSliceOrder(
  items: readonly JsonValue[],
  order: readonly JsonValue[],
  mergeKey: string,
  isMapList: boolean,
): JsonValue[] {
  let toSort = [...items];
  const toDelete: JsonValue[] = [];
  if (isMapList) {
    for (const item of [...items, ...order]) mergeKeyValue(item, mergeKey);
    toSort = [];
    for (const item of items) {
      if ((item as JsonObject)[DIRECTIVE_MARKER] === 'delete') toDelete.push(item);
      else toSort.push(item);
    }
  }
  const positions = toSort.map((item) => indexInList(order, item, mergeKey, isMapList));
  const indexes = toSort.map((_, index) => index);
  // Go's comparator returns true when either side is missing from `order`; with a stable sort that
  // only matters for items absent from it, which the callers never pass together with present ones.
  indexes.sort((x, y) => {
    const px = positions[x] as number;
    const py = positions[y] as number;
    if (px >= 0 && py >= 0 && px !== py) return px - py;
    return x - y;
  });
  return [...indexes.map((index) => toSort[index] as JsonValue), ...toDelete];
}

/** apimachinery `index`: the first position whose merge key (or scalar) is `==` to the item's. */
function indexInList(
  list: readonly JsonValue[],
  item: JsonValue,
  mergeKey: string,
  isMapList: boolean,
): number {
  const value = isMapList ? (isJsonObject(item) ? item[mergeKey] : null) : item;
  for (let i = 0; i < list.length; i++) {
    const candidate = list[i] as JsonValue;
    const other = isMapList ? (isJsonObject(candidate) ? candidate[mergeKey] : null) : candidate;
    if (goScalarEqual(value ?? null, other ?? null)) return i;
  }
  return -1;
}

/** apimachinery validatePatchWithSetOrderList: the patch list must follow `$setElementOrder`. */
export function validatePatchWithSetOrderList(
  patchList: readonly JsonValue[],
  order: readonly JsonValue[],
  mergeKey: string,
): void {
  if (order.length === 0 || patchList.length === 0) return;
  const nonDelete =
    mergeKey === ''
      ? patchList
      : patchList.filter((item) => !(isJsonObject(item) && item[DIRECTIVE_MARKER] === 'delete'));
  let p = 0;
  let o = 0;
  while (p < nonDelete.length && o < order.length) {
    const item = nonDelete[p] as JsonValue;
    if (isJsonObject(item) && Object.hasOwn(item, DIRECTIVE_MARKER)) {
      p++;
      continue;
    }
    if (goScalarEqual(mergeKeyValue(item, mergeKey), mergeKeyValue(order[o] as JsonValue, mergeKey))) p++;
    o++;
  }
  if (p < nonDelete.length && o >= order.length) {
    throw new MergeError(
      'set-element-order-mismatch',
      `The order in patch list:\n${stringifyJson(patchList)}\n doesn't match ${SET_ELEMENT_ORDER_PREFIX} list:\n${stringifyJson(order)}\n`,
    );
  }
}

/** apimachinery partitionMapsByPresentInList / partitionPrimitivesByPresentInList. */
export function partitionByPresence(
  merged: readonly JsonValue[],
  by: readonly JsonValue[],
  mergeKey: string,
  isMapList: boolean,
): { inList: JsonValue[]; notInList: JsonValue[] } {
  const inList: JsonValue[] = [];
  const notInList: JsonValue[] = [];
  for (const item of merged) {
    if (isMapList) mergeKeyValue(item, mergeKey);
    const found = isMapList
      ? by.some(
          (candidate) =>
            isJsonObject(candidate) &&
            Object.hasOwn(candidate, mergeKey) &&
            goScalarEqual(candidate[mergeKey], (item as JsonObject)[mergeKey]),
        )
      : by.some((candidate) => goScalarEqual(candidate, item));
    (found ? inList : notInList).push(item);
  }
  return { inList, notInList };
}

/** apimachinery normalizeElementOrder + mergeSortedSlice (docs/merge-semantics.md#72-element-order). */
export function normalizeElementOrder(
  patchItems: readonly JsonValue[],
  serverOnly: readonly JsonValue[],
  patchOrder: readonly JsonValue[],
  serverOrder: readonly JsonValue[],
  mergeKey: string,
  kind: GoKind,
): JsonValue[] {
  const isMapList = kind === 'map';
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, isMapList);
  const right = normalizeSliceOrder(patchItems, patchOrder, mergeKey, isMapList);
  const result: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) {
      result.push(right[j++] as JsonValue);
    } else if (j >= right.length) {
      result.push(left[i++] as JsonValue);
    } else {
      const li = indexInList(serverOrder, left[i] as JsonValue, mergeKey, isMapList);
      const ri = indexInList(serverOrder, right[j] as JsonValue, mergeKey, isMapList);
      if (li >= 0 && ri >= 0 && li < ri) result.push(left[i++] as JsonValue);
      else result.push(right[j++] as JsonValue);
    }
  }
  return result;
}
