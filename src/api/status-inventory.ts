/**
 * `status.inventory`: what an ApplySet holds, as the readable list in its status (the inventory
 * annotation stays the record tools read, see docs/inventory-protocol.md). Compact ids as Flux's
 * Kustomization writes them, sorted so the list is stable from run to run (an unchanged set means an
 * unchanged status, so no write at rest), and bounded so a set of 10,000 objects keeps its status small.
 */

import type { ObjectRef } from '../manifests/object-ref.js';
import type { ApplySetInventory } from './applyset-types.js';

/**
 * The CRD's `maxItems` of status.inventory.items. A typical id is 30-80 bytes
 * (`shop_web_apps_Deployment`, 25), so 1000 of them are 30-80 KB of JSON.
 * @internal A limit the tests and the CRD test assert against.
 */
export const MAX_INVENTORY_ITEMS = 1000;

/**
 * The most bytes the items may take as JSON, whatever the names. An id may reach ~640 bytes (a
 * 63-byte namespace, a 253-byte name, a 253-byte group and the kind), so 1000 ids alone could be
 * 640 KB; this cap keeps the list under 128 KiB, which with the annotations' own 256 KiB limit
 * leaves the ApplySet far below the API server's 1.5 MiB object limit.
 * @internal A limit the tests assert against.
 */
export const MAX_INVENTORY_BYTES = 128 * 1024;

const utf8 = new TextEncoder();

/**
 * `<namespace>_<name>_<group>_<kind>`, as cli-utils' ObjMetadata.String (Flux's inventory entries):
 * a cluster-scoped object has an empty namespace part, the core group an empty group part. `_` cannot
 * appear in a namespace, group or kind; a `:` in a name (RBAC's `system:auth-delegator`) is written
 * `__`, as cli-utils transcodes it, so an id still splits into its four fields.
 */
export function inventoryItemId(ref: ObjectRef): string {
  return `${ref.namespace}_${ref.name.replaceAll(':', '__')}_${ref.group}_${ref.kind}`;
}

/**
 * The ref an id names, or undefined when it is not one. The namespace ends at the first `_`, the kind
 * and the group are the last two fields (neither holds a `_`), the name is what lies between, with
 * `__` read back as `:`. A name that held `__` itself reads back wrong: what reads it then finds no
 * such object and falls back to the whole inventory.
 */
export function parseInventoryItemId(id: string): ObjectRef | undefined {
  const first = id.indexOf('_');
  const last = id.lastIndexOf('_');
  const beforeKind = id.lastIndexOf('_', last - 1);
  if (first < 0 || beforeKind <= first || last === id.length - 1) return undefined;
  const name = id.slice(first + 1, beforeKind);
  if (name === '') return undefined;
  return {
    namespace: id.slice(0, first),
    name: name.replaceAll('__', ':'),
    group: id.slice(beforeKind + 1, last),
    kind: id.slice(last + 1),
  };
}

/** The held objects as sorted ids, the first ones within both caps, and how many there are. */
export function statusInventory(held: readonly ObjectRef[]): ApplySetInventory {
  // Code-unit order, like Go's sort.Strings: the stored list must not depend on the machine's locale.
  const ids = [...new Set(held.map(inventoryItemId))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const items: string[] = [];
  // `[` and `]`, then each item as a JSON string and its comma.
  let bytes = 2;
  for (const id of ids) {
    const size = utf8.encode(JSON.stringify(id)).length + 1;
    if (items.length === MAX_INVENTORY_ITEMS || bytes + size > MAX_INVENTORY_BYTES) break;
    items.push(id);
    bytes += size;
  }
  return { items, totalCount: ids.length, truncated: items.length < ids.length };
}
