import { dump } from 'js-yaml';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { diffMaps } from './diff-maps.js';
import { cloneJson } from './go-value.js';
import { mapsHaveConflicts } from './maps-have-conflicts.js';
import { MergeConflictError, MergeError } from './merge-error.js';
import { mergeMap } from './merge-map.js';
import type { PatchMeta } from './patch-meta.js';

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
  const current = documentOrEmpty(input.current);

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

function documentOrEmpty(value: JsonValue): JsonObject {
  if (value === null) return {};
  if (!isJsonObject(value)) throw new MergeError('invalid-document', 'invalid JSON document');
  return cloneJson(value);
}
