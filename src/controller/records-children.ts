import type { ApplySet } from '../api/applyset-types.js';
import { COMPRESSED_INVENTORY_KEY } from '../inventory/inventory-encoding.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';

/** Whether the ApplySet's inventory lists anything (plain or compressed). */
export function recordsChildren(applySet: ApplySet): boolean {
  const annotations = applySet.metadata.annotations ?? {};
  const plain = annotations[MetadataKeys.lastAppliedObjects];
  return (plain !== undefined && plain.trim() !== '') || annotations[COMPRESSED_INVENTORY_KEY] !== undefined;
}
