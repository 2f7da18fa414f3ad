import { isJsonObject, type JsonObject } from '../manifests/json-value.js';

/**
 * What a read of one object told us. A failed read is `unknown`, never `absent`: nothing is created
 * over, or deleted because of, a read that did not succeed. `create-unread` is no read at all: never
 * a prune candidate, and created only by a POST, which the server refuses if the object exists.
 */
export type LiveState =
  | { readonly status: 'absent' }
  /**
   * Not read on purpose: an object new to the set, created with a POST whose refusal (409 it exists,
   * or any other) makes the run read it then and judge it as kubectl judges a live object.
   */
  | { readonly status: 'create-unread' }
  | { readonly status: 'present'; readonly object: JsonObject }
  | { readonly status: 'unknown'; readonly error: unknown };

export function liveAnnotation(object: JsonObject, key: string): string | undefined {
  return metadataString(object, 'annotations', key);
}

export function liveLabel(object: JsonObject, key: string): string | undefined {
  return metadataString(object, 'labels', key);
}

function metadataString(
  object: JsonObject,
  field: 'annotations' | 'labels',
  key: string,
): string | undefined {
  const metadata = object['metadata'];
  const entries = isJsonObject(metadata) ? metadata[field] : undefined;
  const value = isJsonObject(entries) ? entries[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The live object's uid, when the server has given it one. */
export function liveUid(object: JsonObject): string | undefined {
  const metadata = object['metadata'];
  const uid = isJsonObject(metadata) ? metadata['uid'] : undefined;
  return typeof uid === 'string' ? uid : undefined;
}

/** The live object's resourceVersion; an empty one counts as none. */
export function liveResourceVersion(object: JsonObject): string | undefined {
  const metadata = object['metadata'];
  const version = isJsonObject(metadata) ? metadata['resourceVersion'] : undefined;
  return typeof version === 'string' && version !== '' ? version : undefined;
}
