import { objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import { toInventory } from './inventory.js';

/**
 * The value of `kubectl.kubernetes.io/last-applied-objects`: `namespace:group:kind:name` one per
 * line, sorted, no trailing newline (an empty set is the empty string). Sorting here, not trusting
 * the caller, keeps the text, and so the hash, a function of the set alone.
 */
export function formatInventory(refs: readonly ObjectRef[]): string {
  return toInventory(refs).map(objectRefKey).join('\n');
}
