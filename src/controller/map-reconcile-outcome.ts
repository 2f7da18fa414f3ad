import {
  MAX_STATUS_ERRORS,
  type ApplySetCondition,
  type ApplySetConditionType,
  type ApplySetObjectError,
  type ApplySetStatus,
  type ApplySetSummary,
  type ConditionStatus,
} from './applyset-types.js';
import type { Correction } from './fight-tracker.js';
import { carriedSafeModeConditions, reportSafeModes, type SafeModeInput } from './safe-mode-status.js';
import type { Requeue } from './work-queue.js';

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

export interface MapOutcomeInput {
  readonly outcome: ReconcileOutcome;
  readonly previous: ApplySetStatus | undefined;
  readonly generation: number | undefined;
  readonly intervalMs: number;
  readonly retryIntervalMs: number;
  /** RFC 3339, the time the status is written. */
  readonly now: string;
  /** The value of the reconcile-requested-at annotation this run handled, if any. */
  readonly handledReconcileAt: string | undefined;
  /** driftMode, prune DryRun and the fights counted; default: none of them. */
  readonly safeModes?: SafeModeInput;
}

const NO_SAFE_MODES: SafeModeInput = {
  driftMode: 'Correct',
  pruneDryRun: false,
  fighting: [],
  newlyFighting: [],
};

export interface MappedOutcome {
  /** The whole new status, written once with the status subresource. */
  readonly status: ApplySetStatus;
  readonly events: readonly ReconcileEvent[];
  readonly requeue: Requeue;
}

/** The one place an outcome becomes conditions, events and the next requeue. */
export function mapReconcileOutcome(input: MapOutcomeInput): MappedOutcome {
  const { outcome, previous } = input;
  const condition = (type: ApplySetConditionType, status: ConditionStatus, reason: string, message: string) =>
    withTransition(
      { type, status, reason, message, lastTransitionTime: input.now, ...generationField(input.generation) },
      previous?.conditions,
    );

  const base: ApplySetStatus = {
    ...previous,
    ...generationField(input.generation),
    ...(input.handledReconcileAt === undefined ? {} : { lastHandledReconcileAt: input.handledReconcileAt }),
  };

  switch (outcome.kind) {
    case 'applied': {
      const { counts, revision } = outcome;
      // Objects applied server-side are named in the Ready message (so in status) and the event.
      const serverSide = outcome.serverSide ?? [];
      const message =
        serverSide.length === 0
          ? `Applied revision: ${revision}`
          : `Applied revision: ${revision} (server-side: ${serverSide.slice(0, 5).join('; ')}${serverSide.length > 5 ? `; +${serverSide.length - 5} more` : ''})`;
      const changed = counts.created + counts.configured + counts.pruned > 0;
      const kept = outcome.keptForOthers ?? [];
      const events: ReconcileEvent[] = [
        ...(changed || previous?.lastAppliedRevision !== revision
          ? [
              {
                type: 'Normal' as const,
                reason: 'ReconciliationSucceeded',
                message: `${message}: ${describeCounts(counts)}${describeAdopted(outcome.adopted ?? [])}${describeChanges(outcome.changes)}`,
              },
            ]
          : []),
        ...(kept.length === 0
          ? []
          : [
              {
                type: 'Warning' as const,
                reason: 'PruneSkippedOwnedByOther',
                message: `${kept.length} object(s) that left Git were kept, another set's apply-owner naming them: ${kept
                  .slice(0, MAX_STATUS_ERRORS)
                  .map((e) => `${e.object}: ${e.message}`)
                  .join('; ')}`,
              },
            ]),
      ];
      const safe = reportSafeModes(outcome, previous, input.safeModes ?? NO_SAFE_MODES, condition);
      return {
        status: {
          ...base,
          ...safe.status,
          conditions: [
            condition('Ready', 'True', 'ReconciliationSucceeded', message),
            condition('Reconciling', 'False', 'ReconciliationSucceeded', message),
            condition('Stalled', 'False', 'ReconciliationSucceeded', message),
            ...safe.conditions,
          ],
          lastAppliedRevision: revision,
          lastAttemptedRevision: revision,
          summary: summaryOf(counts),
          errors: {
            items: kept.slice(0, MAX_STATUS_ERRORS),
            totalCount: kept.length,
            truncated: kept.length > MAX_STATUS_ERRORS,
          },
        },
        events: [...events, ...safe.events],
        requeue: { kind: 'interval', intervalMs: input.intervalMs },
      };
    }
    case 'stalled':
    case 'retryable':
    case 'waiting': {
      const stalled = outcome.kind === 'stalled';
      const errors = outcome.kind === 'waiting' ? [] : (outcome.errors ?? []);
      const previousReady = previous?.conditions?.find((c) => c.type === 'Ready');
      // A failure repeated with the same message is one event, not one per retry.
      const repeated = previousReady?.status === 'False' && previousReady.message === outcome.message;
      return {
        status: {
          ...base,
          conditions: [
            condition('Ready', 'False', outcome.reason, outcome.message),
            stalled
              ? condition('Reconciling', 'False', outcome.reason, outcome.message)
              : condition('Reconciling', 'True', 'ProgressingWithRetry', outcome.message),
            stalled
              ? condition('Stalled', 'True', outcome.reason, outcome.message)
              : condition('Stalled', 'False', outcome.reason, outcome.message),
            ...carriedSafeModeConditions(previous),
          ],
          ...(outcome.revision === undefined ? {} : { lastAttemptedRevision: outcome.revision }),
          ...(outcome.kind !== 'waiting' && outcome.counts !== undefined
            ? { summary: summaryOf(outcome.counts) }
            : {}),
          errors: {
            items: errors.slice(0, MAX_STATUS_ERRORS),
            totalCount: errors.length,
            truncated: errors.length > MAX_STATUS_ERRORS,
          },
        },
        events: repeated ? [] : [{ type: 'Warning', reason: outcome.reason, message: outcome.message }],
        requeue:
          outcome.kind === 'waiting'
            ? { kind: 'interval', intervalMs: outcome.afterMs }
            : stalled
              ? // Stalled needs a change of the ApplySet (a watch event) or of the repository, which only
                // a poll at the interval can see.
                { kind: 'interval', intervalMs: input.intervalMs }
              : { kind: 'backoff', maxDelayMs: input.retryIntervalMs },
      };
    }
  }
}

/** Objects an event names per verb before it says how many more. */
const NAMED_PER_VERB = 10;

/** `; created configmap/a -n x; configured deployment.apps/web -n x; pruned configmap/old -n x (+3 more)`. */
export function describeChanges(changes: ReconcileOutcomeChanges | undefined): string {
  if (changes === undefined) return '';
  const parts: string[] = [];
  for (const verb of ['created', 'configured', 'pruned'] as const) {
    const names = changes[verb];
    if (names.length === 0) continue;
    const more = names.length > NAMED_PER_VERB ? ` (+${names.length - NAMED_PER_VERB} more)` : '';
    parts.push(`${verb} ${names.slice(0, NAMED_PER_VERB).join(', ')}${more}`);
  }
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}

type ReconcileOutcomeChanges = NonNullable<Extract<ReconcileOutcome, { kind: 'applied' }>['changes']>;

/** `2 created, 1 configured, 3 unchanged, 1 pruned`: the counts an event reports. */
export function describeCounts(counts: OutcomeCounts): string {
  const parts = [
    `${counts.created} created`,
    `${counts.configured} configured`,
    `${counts.unchanged} unchanged`,
    `${counts.pruned} pruned`,
  ];
  if ((counts.adopted ?? 0) > 0) parts.push(`${counts.adopted} adopted`);
  if ((counts.pruneSkipped ?? 0) > 0) parts.push(`${counts.pruneSkipped} not pruned`);
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  if (counts.conflicts > 0) parts.push(`${counts.conflicts} conflicts`);
  return parts.join(', ');
}

/** `; adopted: ns::ConfigMap:a, ns::ConfigMap:b`: an adoption is never silent, but an event stays short. */
function describeAdopted(adopted: readonly string[]): string {
  if (adopted.length === 0) return '';
  const named = adopted.slice(0, MAX_STATUS_ERRORS).join(', ');
  const more = adopted.length > MAX_STATUS_ERRORS ? ` and ${adopted.length - MAX_STATUS_ERRORS} more` : '';
  return `; adopted: ${named}${more}`;
}

function summaryOf(counts: OutcomeCounts): ApplySetSummary {
  return {
    applied: counts.created + counts.configured,
    unchanged: counts.unchanged,
    pruned: counts.pruned,
    // Always written, 0 included: the status is a merge patch, so a key left out would keep the
    // count of an earlier run (a PruneIncomplete that has since completed).
    pruneSkipped: counts.pruneSkipped ?? 0,
    adopted: counts.adopted ?? 0,
    failed: counts.failed + counts.conflicts,
  };
}

/** metav1.Condition semantics: lastTransitionTime only moves when the status does. */
function withTransition(
  next: ApplySetCondition,
  previous: readonly ApplySetCondition[] | undefined,
): ApplySetCondition {
  const before = previous?.find((c) => c.type === next.type);
  return before !== undefined && before.status === next.status
    ? { ...next, lastTransitionTime: before.lastTransitionTime }
    : next;
}

function generationField(generation: number | undefined): { observedGeneration?: number } {
  return generation === undefined ? {} : { observedGeneration: generation };
}
