import {
  MAX_STATUS_ERRORS,
  type ApplySetCondition,
  type ApplySetConditionType,
  type ApplySetErrors,
  type ApplySetObjectError,
  type ApplySetStatus,
  type ApplySetSummary,
  type ConditionStatus,
} from './applyset-types.js';
import { describeAdopted, describeChanges, describeCounts, EVENT_MESSAGE_LIMIT } from './describe-outcome.js';
import type { OutcomeCounts, ReconcileEvent, ReconcileOutcome } from './reconcile-outcome.js';
import type { Requeue } from './requeue.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import { statusInventory } from './status-inventory.js';
import { carriedSafeModeConditions, reportSafeModes, type SafeModeInput } from './safe-mode-status.js';

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
  /** What the set holds after the run (status.inventory); undefined keeps the previous list. */
  readonly held?: readonly ObjectRef[];
}

const NO_SAFE_MODES: SafeModeInput = {
  driftMode: 'Correct',
  pruneDryRun: false,
  fighting: [],
  newlyFighting: [],
};

interface MappedOutcome {
  /** The whole new status, written once with the status subresource. */
  readonly status: ApplySetStatus;
  readonly events: readonly ReconcileEvent[];
  readonly requeue: Requeue;
}

/** The one place an outcome becomes conditions, events and the next requeue. */
export function mapReconcileOutcome(input: MapOutcomeInput): MappedOutcome {
  const { outcome, previous } = input;
  const condition: MakeCondition = (type, status, reason, message) =>
    withTransition(
      { type, status, reason, message, lastTransitionTime: input.now, ...generationField(input.generation) },
      previous?.conditions,
    );
  const base: ApplySetStatus = {
    ...previous,
    ...generationField(input.generation),
    ...(input.handledReconcileAt === undefined ? {} : { lastHandledReconcileAt: input.handledReconcileAt }),
    ...(input.held === undefined ? {} : { inventory: statusInventory(input.held) }),
  };
  switch (outcome.kind) {
    case 'applied':
      return mapApplied(outcome, input, base, condition);
    case 'stalled':
    case 'retryable':
    case 'waiting':
      return mapNotApplied(outcome, input, base, condition);
  }
}

type MakeCondition = (
  type: ApplySetConditionType,
  status: ConditionStatus,
  reason: string,
  message: string,
) => ApplySetCondition;
type AppliedOutcome = Extract<ReconcileOutcome, { kind: 'applied' }>;
type NotAppliedOutcome = Exclude<ReconcileOutcome, { kind: 'applied' }>;

/** Ready, with the objects kept for another set in status.errors, and the safe modes reported. */
function mapApplied(
  outcome: AppliedOutcome,
  input: MapOutcomeInput,
  base: ApplySetStatus,
  condition: MakeCondition,
): MappedOutcome {
  const { counts, revision } = outcome;
  const message = appliedMessage(revision, outcome.serverSide ?? []);
  const kept = outcome.keptForOthers ?? [];
  const safe = reportSafeModes(outcome, input.previous, input.safeModes ?? NO_SAFE_MODES, condition);
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
      // Of the revision just applied; a run that did not count them (no hooks asked) keeps the last.
      ...(outcome.preDeleteHooks === undefined ? {} : { preDeleteHooks: outcome.preDeleteHooks }),
      summary: steadySummary(input.previous, revision, counts) ?? summaryOf(counts),
      errors: statusErrors(kept),
    },
    events: [...appliedEvents(outcome, message, input.previous), ...safe.events],
    requeue: { kind: 'interval', intervalMs: input.intervalMs },
  };
}

/** Objects applied server-side are named in the Ready message (so in status) and the event. */
function appliedMessage(revision: string, serverSide: readonly string[]): string {
  if (serverSide.length === 0) return `Applied revision: ${revision}`;
  const more = serverSide.length > 5 ? `; +${serverSide.length - 5} more` : '';
  return `Applied revision: ${revision} (server-side: ${serverSide.slice(0, 5).join('; ')}${more})`;
}

/** An event when something changed or the revision is new; a Warning for objects kept for others. */
function appliedEvents(
  outcome: AppliedOutcome,
  message: string,
  previous: ApplySetStatus | undefined,
): ReconcileEvent[] {
  const { counts, revision } = outcome;
  const changed = counts.created + counts.configured + counts.pruned > 0;
  const kept = outcome.keptForOthers ?? [];
  const events: ReconcileEvent[] = [];
  const head = `${message}: ${describeCounts(counts)}${describeAdopted(outcome.adopted ?? [])}`;
  if (changed || previous?.lastAppliedRevision !== revision)
    events.push({
      type: 'Normal',
      reason: 'ReconciliationSucceeded',
      message: `${head}${describeChanges(outcome.changes, EVENT_MESSAGE_LIMIT - head.length)}`,
    });
  if (kept.length > 0)
    events.push({
      type: 'Warning',
      reason: 'PruneSkippedOwnedByOther',
      message: `${kept.length} object(s) that left Git were kept, another set's apply-owner naming them: ${kept
        .slice(0, MAX_STATUS_ERRORS)
        .map((e) => `${e.object}: ${e.message}`)
        .join('; ')}`,
    });
  return events;
}

/** Not Ready: stalled waits for a change, retryable backs off, waiting comes back after its delay. */
function mapNotApplied(
  outcome: NotAppliedOutcome,
  input: MapOutcomeInput,
  base: ApplySetStatus,
  condition: MakeCondition,
): MappedOutcome {
  const stalled = outcome.kind === 'stalled';
  const errors = outcome.kind === 'waiting' ? [] : (outcome.errors ?? []);
  const previousReady = input.previous?.conditions?.find((c) => c.type === 'Ready');
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
        ...carriedSafeModeConditions(input.previous),
      ],
      ...(outcome.revision === undefined ? {} : { lastAttemptedRevision: outcome.revision }),
      ...(outcome.kind !== 'waiting' && outcome.counts !== undefined
        ? { summary: summaryOf(outcome.counts) }
        : {}),
      errors: statusErrors(errors),
    },
    events: repeated ? [] : [{ type: 'Warning', reason: outcome.reason, message: outcome.message }],
    requeue: notAppliedRequeue(outcome, input),
  };
}

function notAppliedRequeue(outcome: NotAppliedOutcome, input: MapOutcomeInput): Requeue {
  if (outcome.kind === 'waiting') return { kind: 'interval', intervalMs: outcome.afterMs };
  // Stalled needs a change of the ApplySet (a watch event) or of the repository, which only a poll at
  // the interval can see.
  if (outcome.kind === 'stalled') return { kind: 'interval', intervalMs: input.intervalMs };
  return { kind: 'backoff', maxDelayMs: input.retryIntervalMs };
}

/** The first MAX_STATUS_ERRORS errors (the CRD's maxItems), and how many there were. */
function statusErrors(errors: readonly ApplySetObjectError[]): ApplySetErrors {
  return {
    items: errors.slice(0, MAX_STATUS_ERRORS),
    totalCount: errors.length,
    truncated: errors.length > MAX_STATUS_ERRORS,
  };
}

/**
 * The summary a run of the revision already applied leaves as it is when it changed nothing: the
 * counts are those of the last run that applied, pruned or failed something, so a reconcile at rest
 * writes no status at all (issue #39), not one more write for `applied` becoming `unchanged`.
 */
function steadySummary(
  previous: ApplySetStatus | undefined,
  revision: string,
  counts: OutcomeCounts,
): ApplySetSummary | undefined {
  const summary = previous?.summary;
  if (summary === undefined || previous?.lastAppliedRevision !== revision) return undefined;
  const changed = counts.created + counts.configured + counts.pruned + counts.failed + counts.conflicts;
  const same =
    changed === 0 && (counts.adopted ?? 0) === 0 && (counts.pruneSkipped ?? 0) === summary.pruneSkipped;
  return same ? summary : undefined;
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
export function withTransition(
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
