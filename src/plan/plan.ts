import type { ApplyWave, PruneWave } from '../manifests/apply-waves.js';
import type { JsonObject } from '../manifests/json-value.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import type { Inventory } from '../inventory/inventory.js';
import type { PruneSkipReason } from '../inventory/ownership-policy.js';

/**
 * One object to apply. The plan does not know the merge engine: `update` means "three-way merge at
 * run time, PATCH if the patch is not empty, else unchanged", which the executor decides against the
 * object it reads then.
 */
export type ApplyAction =
  | {
      readonly type: 'create';
      readonly ref: ObjectRef;
      readonly object: ManifestObject;
      /** Not read before (an object new to the set): created by a POST the server refuses if it exists. */
      readonly unread?: true;
    }
  | {
      readonly type: 'update';
      readonly ref: ObjectRef;
      readonly object: ManifestObject;
      readonly live: JsonObject;
      /** The live object had no apply-owner: this run takes it over, as kubectl apply would. */
      readonly adopt: boolean;
    }
  | {
      readonly type: 'conflict';
      readonly ref: ObjectRef;
      readonly object: ManifestObject;
      readonly reason: 'owned-by-other' | 'adoption-disabled';
      /** The other set's uid, for `owned-by-other`. */
      readonly owner?: string;
    }
  /** The read failed: ownership cannot be checked, so nothing is written to this object this run. */
  | {
      readonly type: 'unknown-read';
      readonly ref: ObjectRef;
      readonly object: ManifestObject;
      readonly error: unknown;
    };

/** Why a prune candidate is kept, beyond the ownership rules: deleting it would delete what stays. */
export type PruneKeepReason = Exclude<PruneSkipReason, 'still-desired' | 'not-in-inventory'> | SetKeepReason;
type SetKeepReason = 'namespace-still-used' | 'crd-still-used' | 'dry-run';

export type PruneAction =
  | { readonly type: 'delete'; readonly ref: ObjectRef; readonly live: JsonObject }
  | {
      readonly type: 'skip';
      readonly ref: ObjectRef;
      readonly reason: PruneKeepReason;
      readonly owner?: string;
      readonly error?: unknown;
      /** For the set rules: the objects that still need this Namespace or CRD (a few, for the message). */
      readonly usedBy?: readonly ObjectRef[];
    };

/**
 * The crash-safe sequence of the prune proposal, as data, in order. A crash between any two steps
 * leaves nothing untracked (the inventory is widened before anything is created) and nothing wrongly
 * deleted (it is narrowed only after the deletions).
 */
export type PlanStep =
  /** (1) Write old ∪ new to the apply-config object, creating it if needed. */
  | { readonly type: 'widen-inventory'; readonly inventory: Inventory }
  /** (2) Apply one wave; its actions are independent and may run concurrently. */
  | { readonly type: 'apply-wave'; readonly wave: ApplyWave; readonly actions: readonly ApplyAction[] }
  /** After the foundation wave: wait until these CRDs are Established, then refresh the REST mapping. */
  | { readonly type: 'wait-for-crds'; readonly crds: readonly ObjectRef[] }
  /**
   * Between two sync waves (applyset.dev/wave): wait until the objects this wave applied are healthy;
   * a wave that is not stops the run before the next is applied (nothing is pruned). `next` is the
   * wave applied after it: the Sync hooks of the waves from `wave` up to it run here.
   */
  | {
      readonly type: 'wait-for-sync-wave';
      readonly wave: number;
      readonly refs: readonly ObjectRef[];
      /** The wave's place among the set's sync waves (1-based), how many there are, and the next one's number. */
      readonly position: number;
      readonly waves: number;
      readonly next: number;
    }
  /** (3) Prune one wave, in reverse wave order. */
  | { readonly type: 'prune-wave'; readonly wave: PruneWave; readonly actions: readonly PruneAction[] }
  /**
   * (4) Write the final list: `keep`, plus whichever of `deleting` was neither deleted nor released
   * (see `narrowedInventory`), so an object whose prune failed is never forgotten.
   */
  | { readonly type: 'narrow-inventory'; readonly keep: Inventory; readonly deleting: Inventory }
  /** (5) Write the hash of the list written in (4): the sign that the run completed. */
  | { readonly type: 'write-hash' };

export interface Plan {
  readonly steps: readonly PlanStep[];
  /** The inventory read at the start. */
  readonly inventoryOld: Inventory;
  /** What the set will hold if every action succeeds. */
  readonly inventoryNew: Inventory;
}

type PlanRefusalCode = 'empty-set' | 'parent-in-set';

export interface PlanRefusal {
  readonly code: PlanRefusalCode;
  readonly message: string;
}

export type PlanResult =
  | { readonly ok: true; readonly plan: Plan }
  | { readonly ok: false; readonly refusals: readonly PlanRefusal[] };
