import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { encodeGoJson } from './encode-go-json.js';
import { cloneJson } from './go-value.js';
import { MergeError } from './merge-error.js';
import { pruneNulls } from './prune-nulls.js';
import { parseJsonLossless } from '../manifests/lossless-json.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

export interface AppliedDocuments {
  /** The annotation value, byte for byte as kubectl writes it (Go encoding plus a newline). */
  readonly annotation: string;
  /** The manifest with that annotation: what the patch is computed against, and the create body. */
  readonly modified: JsonObject;
}

/**
 * kubectl's GetModifiedConfiguration (docs/merge-semantics.md#11-the-last-applied-annotation):
 * remove any old last-applied annotation, materialise `metadata.annotations` (an absent map becomes
 * `{}`, which then shows in the annotation), encode, and embed the result. Nothing else is
 * stripped, not even nulls or `status`. Namespaced objects must already carry their namespace:
 * kubectl defaults it before this step, so the annotation contains it. The manifest is not changed.
 */
export function buildLastAppliedConfiguration(manifest: JsonObject): AppliedDocuments {
  const object = cloneJson(manifest);
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  object.metadata = metadata;
  const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : {};
  delete annotations[LAST_APPLIED_ANNOTATION];
  // kubectl reads the annotations with unstructured's GetAnnotations (NestedNullCoercingStringMap) and
  // writes them back with SetAnnotations: a null value becomes "" in both the annotation and the object.
  for (const [key, value] of Object.entries(annotations)) if (value === null) annotations[key] = '';
  metadata.annotations = annotations;
  // unstructured JSON encoding uses json.Encoder, which ends every document with a newline.
  const annotation = `${encodeGoJson(object)}\n`;
  const modified = cloneJson(object);
  (modified.metadata as JsonObject).annotations = { ...annotations, [LAST_APPLIED_ANNOTATION]: annotation };
  return { annotation, modified };
}

/**
 * The original of the three-way merge: the live object's annotation parsed, or null when it has
 * none (kubectl then deletes nothing, K33).
 */
export function readLastAppliedConfiguration(live: JsonValue): JsonObject | null {
  if (!isJsonObject(live) || !isJsonObject(live.metadata)) return null;
  const annotations = live.metadata.annotations;
  if (!isJsonObject(annotations)) return null;
  const text = annotations[LAST_APPLIED_ANNOTATION];
  if (typeof text !== 'string' || text === '') return null;
  let parsed: unknown;
  try {
    parsed = parseJsonLossless(text);
  } catch (error) {
    throw new MergeError('invalid-document', 'invalid JSON document', { cause: error });
  }
  if (parsed === null) return null;
  if (!isJsonObject(parsed)) throw new MergeError('invalid-document', 'invalid JSON document');
  return parsed;
}

/**
 * The create body: `modified` with nulls pruned recursively; the annotation text keeps them
 * (docs/merge-semantics.md#9-null).
 */
export function buildCreateBody(modified: JsonObject): JsonObject {
  return pruneNulls(cloneJson(modified)) as JsonObject;
}
