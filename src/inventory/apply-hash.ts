import { createHash } from 'node:crypto';
import type { ObjectRef } from '../manifests/object-ref.js';
import { formatInventory } from './format-inventory.js';

/** Hex characters kept: 160 bits, well within a label value's 63 characters. */
const APPLY_HASH_LENGTH = 40;

/**
 * The `kubectl.kubernetes.io/apply-hash` label: the sha256 of the formatted inventory, in hex,
 * truncated to fit a label value. It is written last, so a parent whose hash does not match its list
 * tells that the previous run did not complete.
 */
export function computeApplyHash(refs: readonly ObjectRef[]): string {
  return createHash('sha256').update(formatInventory(refs), 'utf8').digest('hex').slice(0, APPLY_HASH_LENGTH);
}
