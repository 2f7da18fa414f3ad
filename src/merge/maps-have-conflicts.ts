import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { goDeepEqual, goSortByString, goString } from './go-value.js';
import { deduplicateScalars, sliceElementKind } from './list-elements.js';
import { MergeError } from './merge-error.js';
import { DIRECTIVE_MARKER, RETAIN_KEYS_DIRECTIVE } from './patch-directives.js';
import { splitRetainKeys, type PatchMeta } from './patch-meta.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * apimachinery MergingMapsHaveConflicts, used only with `--overwrite=false`: whether the patch
 * touches a field that changed between the last-applied configuration and the live object
 * (docs/merge-semantics.md#5-combining-and-conflicts).
 */
export function mapsHaveConflicts(left: JsonObject, right: JsonObject, meta: PatchMeta): boolean {
  return fieldsHaveConflicts(left, right, meta, '', '');
}

function fieldsHaveConflicts(
  left: JsonValue,
  right: JsonValue,
  meta: PatchMeta,
  strategy: string,
  mergeKey: string,
): boolean {
  if (isJsonObject(left)) {
    if (!isJsonObject(right)) return true;
    const leftHas = Object.hasOwn(left, DIRECTIVE_MARKER);
    const rightHas = Object.hasOwn(right, DIRECTIVE_MARKER);
    if (
      (leftHas || rightHas) &&
      (leftHas !== rightHas || left[DIRECTIVE_MARKER] !== right[DIRECTIVE_MARKER])
    ) {
      return true;
    }
    if (strategy === 'replace') return false;
    return objectFieldsHaveConflicts(left, right, meta);
  }
  if (Array.isArray(left)) {
    if (!Array.isArray(right)) return true;
    return listsHaveConflicts(left, right, meta, strategy, mergeKey);
  }
  return !goDeepEqual(left, right);
}

function objectFieldsHaveConflicts(left: JsonObject, right: JsonObject, meta: PatchMeta): boolean {
  for (const key of Object.keys(left)) {
    if (key === DIRECTIVE_MARKER || key === RETAIN_KEYS_DIRECTIVE || !Object.hasOwn(right, key)) continue;
    const leftValue = left[key] as JsonValue;
    let subMeta = meta;
    let strategy = '';
    let mergeKey = '';
    if (Array.isArray(leftValue) || isJsonObject(leftValue)) {
      const field = Array.isArray(leftValue) ? meta.lookupListField(key) : meta.lookupObjectField(key);
      subMeta = field.meta;
      strategy = splitRetainKeys(field.strategies).strategy;
      mergeKey = field.mergeKey;
    }
    if (fieldsHaveConflicts(leftValue, right[key] as JsonValue, subMeta, strategy, mergeKey)) return true;
  }
  return false;
}

function listsHaveConflicts(
  left: JsonValue[],
  right: JsonValue[],
  meta: PatchMeta,
  strategy: string,
  mergeKey: string,
): boolean {
  const kind = sliceElementKind(left, right);
  if (strategy === 'merge') {
    if (kind !== 'map') return false;
    const leftByKey = byMergeKey(left, mergeKey);
    const rightByKey = byMergeKey(right, mergeKey);
    for (const [key, value] of leftByKey) {
      const other = rightByKey.get(key);
      if (other !== undefined && fieldsHaveConflicts(value, other, meta, '', '')) return true;
    }
    return false;
  }
  if (left.length !== right.length) return true;
  const normalize = (list: JsonValue[]) =>
    kind === 'map' ? list : goSortByString(deduplicateScalars(list), goString);
  const a = normalize(left);
  const b = normalize(right);
  return a.some((item, index) => fieldsHaveConflicts(item, b[index] as JsonValue, meta, '', ''));
}

function byMergeKey(list: readonly JsonValue[], mergeKey: string): Map<string, JsonValue> {
  const result = new Map<string, JsonValue>();
  for (const item of list) {
    if (!isJsonObject(item))
      throw new MergeError(
        'bad-list-elements',
        `invalid element type in merging list:${stringifyJson(list)}`,
      );
    if (!Object.hasOwn(item, mergeKey)) {
      throw new MergeError(
        'missing-merge-key',
        `cannot find merge key \`${mergeKey}\` in merging list element:${stringifyJson(item)}`,
      );
    }
    const value = item[mergeKey] as JsonValue;
    result.set(`${typeof value}:${goString(value)}`, item);
  }
  return result;
}
