// A file of its own, though small and with one importer (apply/run-plan.ts): the narrowing is a pure
// rule of the plan, kept in the pure plan/ folder where its unit test runs it without the engine.
import type { ObjectRef } from '../manifests/object-ref.js';
import { differenceInventories, unionInventories, type Inventory } from '../inventory/inventory.js';
import type { PlanStep } from './plan.js';

/**
 * The list step (4) writes: what the plan keeps, plus every object it meant to delete that is not
 * confirmed deleted (the delete failed, or was never attempted because the run stopped early). An
 * object the plan meant to delete leaves only when its deletion is confirmed or when the run released
 * it (kept it, removed its ownership metadata: a Namespace or CRD holding objects of others), so
 * nothing the set still claims is ever forgotten, and nothing it gave up is judged again. An object
 * of the set that this run added and certainly never wrote (the caller says which) is not kept: no
 * object of ours can exist under its name.
 */
export function narrowedInventory(
  step: Extract<PlanStep, { type: 'narrow-inventory' }>,
  confirmedDeleted: readonly ObjectRef[],
  released: readonly ObjectRef[] = [],
  neverWritten: readonly ObjectRef[] = [],
): Inventory {
  return unionInventories(
    differenceInventories(step.keep, neverWritten),
    differenceInventories(step.deleting, [...confirmedDeleted, ...released]),
  );
}
