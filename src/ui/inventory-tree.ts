import type { ApplySet } from '../api/applyset-types.js';
import { decodeInventory } from '../inventory/inventory-encoding.js';
import { parseInventoryLeniently } from '../inventory/parse-inventory.js';
import type { UiObjectRef, UiObjectState } from './ui-data.js';

/**
 * An id of `status.inventory.items` (`<namespace>_<name>_<group>_<kind>`, status-inventory.ts) back to
 * its parts: neither namespace, group nor kind holds `_`, so the name is what lies between the first
 * and the third-from-last; a `:` in a name was written `__`.
 * @internal The unit tests read ids back alone.
 */
export function parseInventoryItemId(id: string): UiObjectRef | undefined {
  const parts = id.split('_');
  if (parts.length < 4) return undefined;
  const namespace = parts[0] ?? '';
  const kind = parts[parts.length - 1] ?? '';
  const group = parts[parts.length - 2] ?? '';
  const name = parts.slice(1, -2).join('_').replaceAll('__', ':');
  if (name === '' || kind === '') return undefined;
  return { namespace, name, group, kind };
}

interface InventoryKindNode {
  /** `Deployment.apps`, `ConfigMap`. */
  readonly kind: string;
  readonly objects: readonly UiObjectState[];
}

export interface InventoryNamespaceNode {
  /** `''` for cluster-scoped objects. */
  readonly namespace: string;
  readonly kinds: readonly InventoryKindNode[];
}

/** The objects grouped by namespace, then kind (`Kind.group`), each level sorted. */
export function inventoryTree(objects: readonly UiObjectState[]): InventoryNamespaceNode[] {
  const byNamespace = new Map<string, Map<string, UiObjectState[]>>();
  for (const object of objects) {
    const kinds = byNamespace.get(object.namespace) ?? new Map<string, UiObjectState[]>();
    byNamespace.set(object.namespace, kinds);
    const kind = object.group === '' ? object.kind : `${object.kind}.${object.group}`;
    kinds.set(kind, [...(kinds.get(kind) ?? []), object]);
  }
  const sorted = <T>(entries: Iterable<[string, T]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : 1));
  return sorted(byNamespace).map(([namespace, kinds]) => ({
    namespace,
    kinds: sorted(kinds).map(([kind, list]) => ({
      kind,
      objects: [...list].sort((a, b) => (a.name < b.name ? -1 : 1)),
    })),
  }));
}

/**
 * The objects the set holds: `status.inventory` when the last run wrote it, else the inventory
 * annotation the ApplySet carries as the set's parent (a run still waiting for health has applied, and
 * recorded its objects there, before it writes the status list). `total` counts what `refs` may leave out.
 */
export function inventoryRefs(applySet: ApplySet): { readonly refs: UiObjectRef[]; readonly total: number } {
  const listed = applySet.status?.inventory;
  if (listed !== undefined) {
    const refs = listed.items
      .map(parseInventoryItemId)
      .filter((ref): ref is UiObjectRef => ref !== undefined);
    return { refs, total: listed.totalCount };
  }
  try {
    const refs = [...parseInventoryLeniently(decodeInventory(applySet.metadata.annotations ?? {})).inventory];
    return { refs, total: refs.length };
  } catch {
    // A damaged or oversized annotation: the controller reports it in the status; the page lists nothing.
    return { refs: [], total: 0 };
  }
}
