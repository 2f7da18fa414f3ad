import type { ObjectRef } from '../manifests/object-ref.js';
import { differenceInventories, unionInventories, type Inventory } from '../inventory/inventory.js';
import type { PlanStep } from './plan.js';

/**
 * The list step (4) writes: what the plan keeps, plus every object it meant to delete that is not
 * confirmed deleted (the delete failed, or was never attempted because the run stopped early). Only
 * confirmed deletions leave the inventory, so nothing the set applied is ever forgotten.
 */
export function narrowedInventory(
  step: Extract<PlanStep, { type: 'narrow-inventory' }>,
  confirmedDeleted: readonly ObjectRef[],
): Inventory {
  return unionInventories(step.keep, differenceInventories(step.deleting, confirmedDeleted));
}
