import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { cloneJson } from './go-value.js';
import { MergeError } from './merge-error.js';
import { mergeMap } from './merge-map.js';
import type { PatchMeta } from './patch-meta.js';

/**
 * Applies a strategic merge patch the way the API server does before decoding, defaulting and
 * validation (docs/merge-semantics.md#7-patch-directives): `$deleteFromPrimitiveList` applied,
 * unmatched nulls dropped, nulls stripped from added values, the element order of section 7.2
 * including its aliasing quirk. For previews, diffs and tests; the inputs are not changed.
 */
export function applyStrategicMergePatch(object: JsonValue, patch: JsonValue, meta: PatchMeta): JsonObject {
  if (object !== null && !isJsonObject(object))
    throw new MergeError('invalid-document', 'invalid JSON document');
  if (!isJsonObject(patch)) throw new MergeError('invalid-document', 'invalid JSON document');
  return mergeMap(object === null ? {} : cloneJson(object), cloneJson(patch), meta, 'server');
}
