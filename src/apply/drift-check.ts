import type { JsonObject } from '../manifests/json-value.js';
import { applyStrategicMergePatch } from '../merge/apply-strategic-merge-patch.js';
import { applyJsonMergePatch } from '../merge/json-merge-patch.js';
import { LAST_APPLIED_ANNOTATION } from '../merge/last-applied-configuration.js';
import type { PatchMeta } from '../merge/patch-meta.js';
import { diffFields } from '../plan/diff-fields.js';

/*
 * Drift as a list of fields: what a patch would change on the live object (driftMode Warn reports it
 * instead of sending the patch), and what a write did change (fight detection names those fields).
 */

/** Fields the server sets on every write; a change of them is not a change of the object. */
const BOOKKEEPING = ['metadata.resourceVersion', 'metadata.generation', 'metadata.managedFields'];

function isBookkeeping(path: string): boolean {
  // The last-applied annotation records the file, not the object: a change there alone is no drift.
  if (path.includes(LAST_APPLIED_ANNOTATION)) return true;
  return BOOKKEEPING.some(
    (prefix) => path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`),
  );
}

/** The fields `patch` would change on `live`, computed as the server would apply it. */
export function fieldsPatchWouldChange(
  live: JsonObject,
  patch: JsonObject,
  meta: PatchMeta | 'json-merge',
): string[] {
  const after =
    meta === 'json-merge'
      ? (applyJsonMergePatch(live, patch) as JsonObject)
      : applyStrategicMergePatch(live, patch, meta);
  return changedFields(live, after);
}

/** The fields that differ between two versions of one object, the server's bookkeeping aside. */
export function changedFields(before: JsonObject, after: JsonObject): string[] {
  return diffFields(before, after)
    .map((change) => change.path)
    .filter((path) => !isBookkeeping(path));
}
