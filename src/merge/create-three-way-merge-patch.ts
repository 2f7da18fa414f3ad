import { dump } from 'js-yaml';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { diffMaps } from './diff-maps.js';
import { cloneJson } from './go-value.js';
import { mapsHaveConflicts } from './maps-have-conflicts.js';
import { MergeConflictError, MergeError } from './merge-error.js';
import { mergeMap } from './merge-map.js';
import { splitRetainKeys, type PatchMeta } from './patch-meta.js';

export interface ThreeWayInput {
  /** The last-applied configuration; null when the live object has no annotation. */
  readonly original: JsonValue;
  /** The manifest as it will be sent, normally with the new annotation embedded. */
  readonly modified: JsonValue;
  /** The live object. */
  readonly current: JsonValue;
}

/**
 * The strategic merge patch `kubectl apply` sends: apimachinery's CreateThreeWayMergePatch
 * (docs/merge-semantics.md, sections 1 and 3 to 5). Additions and changes come from current →
 * modified, deletions from original → modified; with `overwrite: false` a patch that would undo
 * someone else's change is a MergeConflictError. Pure: the inputs are copied, never changed.
 */
export function createThreeWayMergePatch(
  input: ThreeWayInput,
  meta: PatchMeta,
  options: { readonly overwrite?: boolean } = {},
): JsonObject {
  const original = documentOrEmpty(input.original);
  const modified = documentOrEmpty(input.modified);
  const current = documentOrEmpty(fieldsReadByDelta(input.current, input.modified, meta));

  // The delta is computed first, then the deletions, as in Go: both sort lists of scalars of their
  // "from" side in place, and only copies are touched here.
  const delta = diffMaps(current, modified, meta, {
    ignoreDeletions: true,
    ignoreChangesAndAdditions: false,
    setElementOrder: true,
  });
  const deletions = diffMaps(original, modified, meta, {
    ignoreDeletions: false,
    ignoreChangesAndAdditions: true,
    setElementOrder: true,
  });
  const patch = mergeMap(deletions, delta, meta, 'client');

  if (options.overwrite === false) {
    const changed = diffMaps(documentOrEmpty(input.original), documentOrEmpty(input.current), meta, {
      ignoreDeletions: false,
      ignoreChangesAndAdditions: false,
      setElementOrder: false,
    });
    if (mapsHaveConflicts(patch, changed, meta)) {
      throw new MergeConflictError(dump(patch, { sortKeys: true }), dump(changed, { sortKeys: true }));
    }
  }
  return patch;
}

/**
 * What the delta (current → modified, deletions ignored) reads of the live object: the fields that
 * `modified` has, at the top and in `metadata`. A field `modified` lacks would be a deletion, which the
 * delta ignores, and at these two levels no retainKeys strategy looks at the fields beyond (ObjectMeta
 * has none; checked, not assumed). So the copy skips the live object's status and managed fields, most
 * of what a GET answers, and the patch is the same.
 */
function fieldsReadByDelta(current: JsonValue, modified: JsonValue, meta: PatchMeta): JsonValue {
  if (!isJsonObject(current) || !isJsonObject(modified)) return current;
  const read = sharedFields(current, modified);
  const metadata = read['metadata'];
  const wanted = modified['metadata'];
  if (isJsonObject(metadata) && isJsonObject(wanted) && !retainsKeys(meta, 'metadata')) {
    read['metadata'] = sharedFields(metadata, wanted);
  }
  return read;
}

/** The fields of `from` that `to` has too, by reference. */
function sharedFields(from: JsonObject, to: JsonObject): JsonObject {
  const shared: JsonObject = {};
  for (const key of Object.keys(to)) if (Object.hasOwn(from, key)) shared[key] = from[key] as JsonValue;
  return shared;
}

/** Whether the object field `key` has the retainKeys strategy (or is unknown: then copied whole). */
function retainsKeys(meta: PatchMeta, key: string): boolean {
  try {
    return splitRetainKeys(meta.lookupObjectField(key).strategies).retainKeys;
  } catch {
    return true;
  }
}

function documentOrEmpty(value: JsonValue): JsonObject {
  if (value === null) return {};
  if (!isJsonObject(value)) throw new MergeError('invalid-document', 'invalid JSON document');
  return cloneJson(value);
}
