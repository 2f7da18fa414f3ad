import { compareObjectRefs, objectRefKey, type ObjectRef } from '../manifests/object-ref.js';

/**
 * The set of objects an apply-config object records: sorted by `objectRefKey`, no duplicates. Build
 * one with `toInventory`; the set operations keep the invariant. Like Flux's inventory package, this
 * is a value type plus set arithmetic, no IO.
 */
export type Inventory = readonly ObjectRef[] & { readonly __inventory: true };

export function toInventory(refs: Iterable<ObjectRef>): Inventory {
  const byKey = new Map<string, ObjectRef>();
  for (const ref of refs) {
    const key = objectRefKey(ref);
    // Copy to the four identity fields: callers may pass richer objects (a ManifestObject's ref).
    if (!byKey.has(key))
      byKey.set(key, { group: ref.group, kind: ref.kind, namespace: ref.namespace, name: ref.name });
  }
  return [...byKey.values()].sort(compareObjectRefs) as unknown as Inventory;
}

export function unionInventories(...inventories: readonly (readonly ObjectRef[])[]): Inventory {
  return toInventory(inventories.flat());
}

/** The refs of `from` that are not in `minus`: with (old, new), what left the set. */
export function differenceInventories(from: readonly ObjectRef[], minus: readonly ObjectRef[]): Inventory {
  const removed = new Set(minus.map(objectRefKey));
  return toInventory(from.filter((ref) => !removed.has(objectRefKey(ref))));
}
