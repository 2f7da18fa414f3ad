import { isJsonObject, type JsonValue } from '../manifests/json-value.js';

/**
 * Drops null members of objects, also inside lists; null list elements themselves stay. Objects are
 * changed in place, so callers pass private copies.
 */
export function pruneNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((item) => pruneNulls(item));
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      const item = value[key] as JsonValue;
      if (item === null) delete value[key];
      else value[key] = pruneNulls(item);
    }
  }
  return value;
}
