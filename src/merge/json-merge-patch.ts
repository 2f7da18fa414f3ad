import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { cloneJson } from './go-value.js';
import { MergeError } from './merge-error.js';
import { pruneNulls } from './prune-nulls.js';

/**
 * The JSON merge patch path of `kubectl apply`, for custom resources and kinds without patch
 * metadata: apimachinery's CreateThreeWayJSONMergePatch over evanphx/json-patch v4
 * (docs/merge-semantics.md#10-json-merge-patch). Every list is atomic, maps merge key by key,
 * deletions come only from original → modified. Numbers are float64 here, as json-patch decodes
 * them: an int64 beyond 2^53 (a `bigint` elsewhere) is rounded in the comparison and in the patch,
 * exactly as kubectl's patch carries it, while the last-applied annotation inside keeps it exact.
 */
export function createThreeWayJsonMergePatch(input: {
  readonly original: JsonValue;
  readonly modified: JsonValue;
  readonly current: JsonValue;
}): JsonObject {
  const original = documentOrEmpty(asFloat64Numbers(input.original));
  const modified = documentOrEmpty(asFloat64Numbers(input.modified));
  const current = documentOrEmpty(asFloat64Numbers(input.current));
  const addAndChange = filterNulls(createMergePatch(current, modified), false);
  const deletions = filterNulls(createMergePatch(original, modified), true);
  const patch = mergeDocuments(cloneJson(deletions), cloneJson(addAndChange));
  // kubectl's preconditions: apply never renames or retypes an object (section 10).
  if (
    'apiVersion' in patch ||
    'kind' in patch ||
    (isJsonObject(patch.metadata) && 'name' in patch.metadata)
  ) {
    throw new MergeError(
      'bad-patch',
      'precondition failed: At least one of apiVersion, kind and name was changed',
    );
  }
  return patch;
}

/** RFC 7386 application as the API server runs it (evanphx/json-patch v4 MergePatch). Inputs are not changed. */
export function applyJsonMergePatch(object: JsonValue, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return pruneNulls(cloneJson(patch));
  const target = isJsonObject(object) ? cloneJson(object) : {};
  return mergeDocuments(target, cloneJson(patch));
}

/** evanphx CreateMergePatch: the RFC 7386 patch that turns `from` into `to`. */
function createMergePatch(from: JsonObject, to: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(to)) {
    const b = to[key] as JsonValue;
    if (!Object.hasOwn(from, key)) {
      patch[key] = b;
      continue;
    }
    const a = from[key] as JsonValue;
    if (jsonType(a) !== jsonType(b)) {
      patch[key] = b;
    } else if (isJsonObject(a)) {
      const sub = createMergePatch(a, b as JsonObject);
      if (Object.keys(sub).length > 0) patch[key] = sub;
    } else if (a !== null && !jsonEqual(a, b)) {
      patch[key] = b;
    }
  }
  for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) patch[key] = null;
  return patch;
}

function jsonType(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index] as JsonValue));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key] as JsonValue, b[key] as JsonValue))
    );
  }
  return false;
}

/**
 * keepOrDeleteNullInObj: with `keepNull`, only the nulls (the deletions); without, everything but
 * the nulls, keeping objects that were empty in the diff itself (`options: {}` is sent, J06).
 */
function filterNulls(patch: JsonObject, keepNull: boolean): JsonObject {
  const filtered: JsonObject = {};
  for (const key of Object.keys(patch)) {
    const value = patch[key] as JsonValue;
    if (value === null) {
      if (keepNull) filtered[key] = null;
    } else if (isJsonObject(value)) {
      if (Object.keys(value).length === 0) {
        if (!keepNull) filtered[key] = value;
        continue;
      }
      const sub = filterNulls(value, keepNull);
      if (Object.keys(sub).length > 0) filtered[key] = sub;
    } else if (!keepNull) {
      filtered[key] = value;
    }
  }
  return filtered;
}

/** evanphx mergeDocs (v4, not "merge-merge"): null deletes, objects recurse, anything else replaces. */
function mergeDocuments(doc: JsonObject, patch: JsonObject): JsonObject {
  for (const key of Object.keys(patch)) {
    const value = patch[key] as JsonValue;
    if (value === null) {
      delete doc[key];
      continue;
    }
    const current = doc[key];
    if (current === undefined || current === null || !isJsonObject(current)) {
      doc[key] = pruneNulls(value);
    } else if (isJsonObject(value)) {
      doc[key] = mergeDocuments(current, value);
    } else {
      // evanphx `merge`: a non-object replacing an object is taken as it is.
      doc[key] = value;
    }
  }
  return doc;
}

function documentOrEmpty(value: JsonValue): JsonObject {
  if (value === null) return {};
  if (!isJsonObject(value)) throw new MergeError('invalid-document', 'invalid JSON document');
  return value;
}

/**
 * The value with every `bigint` as the float64 Go's encoding/json would decode it to. Copies only the
 * containers on the way to a bigint: a document without one (nearly all) comes back as it is.
 */
function asFloat64Numbers(value: JsonValue): JsonValue {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) {
    const items = value.map(asFloat64Numbers);
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (isJsonObject(value)) {
    let result: JsonObject | undefined;
    for (const [key, item] of Object.entries(value)) {
      const converted = asFloat64Numbers(item);
      if (converted === item) continue;
      result ??= { ...value };
      result[key] = converted;
    }
    return result ?? value;
  }
  return value;
}
