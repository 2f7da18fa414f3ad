import type { ApplySetObjectError } from './applyset-types.js';
import type { Correction } from './fight-tracker.js';

/** Counts of what the engine did to the children in one run. */
export interface OutcomeCounts {
  readonly created: number;
  readonly configured: number;
  readonly unchanged: number;
  readonly pruned: number;
  /** Objects of the set that existed without an apply-owner and were taken over (configured or unchanged). */
  readonly adopted?: number;
  /** Objects that left Git but could not be judged, so were not pruned (they stay in the inventory). */
  readonly pruneSkipped?: number;
  readonly failed: number;
  readonly conflicts: number;
}

/**
 * How one reconcile ended, with its intent (docs/error-intents.md): `applied` (the
 * whole set is in place), `stalled` (a human must change the ApplySet or the repository), `retryable`
 * (the world may fix itself: back off), `waiting` (a known delay).
 */
export type ReconcileOutcome =
  | {
      readonly kind: 'applied';
      readonly revision: string;
      readonly counts: OutcomeCounts;
      /** How many PreDelete hooks the revision holds (status.preDeleteHooks); undefined: not counted. */
      readonly preDeleteHooks?: number;
      /** The objects taken over this run (`namespace:group:kind:name`), named in the event. */
      readonly adopted?: readonly string[];
      /** Objects applied server-side (too large for the last-applied annotation), with why. */
      readonly serverSide?: readonly string[];
      /** The objects created, configured and pruned, as kubectl names them, named in the event. */
      readonly changes?: {
        readonly created: readonly string[];
        readonly configured: readonly string[];
        readonly pruned: readonly string[];
      };
      /**
       * Objects that left Git but that another set's apply-owner names, so were kept: in status.errors
       * and a Warning event, though the set is Ready (the mark may be forged by a tenant).
       */
      readonly keptForOthers?: readonly ApplySetObjectError[];
      /** driftMode Warn: objects found drifted and left alone, with the fields. */
      readonly drift?: readonly Correction[];
      /** Objects the run changed back on the cluster (configured, or created again), with the fields. */
      readonly corrections?: readonly Correction[];
      /** prune DryRun: what a prune would have deleted. */
      readonly wouldPrune?: readonly WouldPrune[];
    }
  | {
      readonly kind: 'stalled' | 'retryable';
      /** CamelCase, e.g. InvalidManifests, GitUnreachable. */
      readonly reason: string;
      readonly message: string;
      /** The revision attempted, when Git answered. */
      readonly revision?: string;
      readonly counts?: OutcomeCounts;
      readonly errors?: readonly ApplySetObjectError[];
    }
  | {
      readonly kind: 'waiting';
      readonly reason: string;
      readonly message: string;
      readonly revision?: string;
      readonly afterMs: number;
    };

/** An object a prune would delete: its inventory key, and its name as kubectl prints it. */
export interface WouldPrune {
  readonly object: string;
  readonly name: string;
}

/** A Kubernetes Event to record on the ApplySet. */
export interface ReconcileEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** A step of a reconcile that ended the run early with an outcome, or what it hands the next step. */
export type Step<T> = { readonly done: ReconcileOutcome } | { readonly value: T };

/** A step that stalls the run, for the reason and message given. */
export function stalledStep(
  reason: string,
  message: string,
): { done: { kind: 'stalled'; reason: string; message: string } } {
  return { done: { kind: 'stalled', reason, message } };
}
