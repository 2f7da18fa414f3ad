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

export const EMPTY_INVENTORY: Inventory = toInventory([]);

export function unionInventories(...inventories: readonly (readonly ObjectRef[])[]): Inventory {
  return toInventory(inventories.flat());
}

/** The refs of `from` that are not in `minus`: with (old, new), what left the set. */
export function differenceInventories(from: readonly ObjectRef[], minus: readonly ObjectRef[]): Inventory {
  const removed = new Set(minus.map(objectRefKey));
  return toInventory(from.filter((ref) => !removed.has(objectRefKey(ref))));
}

export function inventoryHas(inventory: readonly ObjectRef[], ref: ObjectRef): boolean {
  const key = objectRefKey(ref);
  return inventory.some((entry) => objectRefKey(entry) === key);
}

export function sameInventory(a: readonly ObjectRef[], b: readonly ObjectRef[]): boolean {
  const ka = toInventory(a).map(objectRefKey);
  const kb = toInventory(b).map(objectRefKey);
  return ka.length === kb.length && ka.every((key, index) => key === kb[index]);
}
