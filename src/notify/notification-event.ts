import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { sharedString } from '../kube/shared-strings.js';

/** What changed about an ApplySet, in the words a message uses. */
export type NotificationState =
  | 'progressing'
  | 'applied'
  | 'recovered'
  | 'failed'
  | 'healthTimeout'
  | 'stalled'
  | 'pruneWaiting'
  | 'driftDetected'
  | 'driftCorrected'
  | 'fighting';

export type NotificationSeverity = 'info' | 'warning' | 'error';

/**
 * The strands of an ApplySet's story that change independently: a set can be applied and drifted at
 * once, so each strand has its own "last state sent" and a change in one does not repeat the other.
 */
type NotificationTopic = 'sync' | 'drift' | 'fight';

/** One message-worthy change, before any provider shapes it. */
export interface NotificationEvent {
  readonly namespace: string;
  readonly name: string;
  readonly topic: NotificationTopic;
  readonly state: NotificationState;
  readonly severity: NotificationSeverity;
  /** The condition reason, e.g. ReconciliationSucceeded, InvalidManifests, HealthCheckFailed. */
  readonly reason: string;
  readonly revision: string | undefined;
  /** One line a person reads first. */
  readonly summary: string;
  /** The objects concerned, each as one line (`Deployment/web: created`, `ConfigMap/x: bad field`). */
  readonly details: readonly string[];
}

/** The first objects a message names; the rest are counted, so a message stays readable. */
const DETAIL_LIMIT = 10;

const FAILURE_STATES: ReadonlySet<NotificationState> = new Set(['failed', 'healthTimeout', 'stalled']);

/**
 * The events one reconcile's outcome stands for. `previousSync` is the last sync state sent for
 * this ApplySet, so an apply after a failure reads as recovered.
 */
export function notificationEventsOf(
  applySet: { readonly namespace: string; readonly name: string },
  outcome: ReconcileOutcome,
  extra: {
    readonly previousSync?: NotificationState;
    readonly fighting?: readonly string[];
    /** The revision was applied before: a write now changed the cluster back, a correction. */
    readonly steady?: boolean;
  } = {},
): NotificationEvent[] {
  const base = { namespace: applySet.namespace, name: applySet.name };
  if (outcome.kind !== 'applied') {
    const state = failureState(outcome);
    const details = (outcome.kind === 'waiting' ? [] : (outcome.errors ?? [])).map(
      (error) => `${error.object}: ${error.message}`,
    );
    return [
      {
        ...base,
        topic: 'sync',
        state,
        severity: state === 'pruneWaiting' ? 'warning' : 'error',
        reason: outcome.reason,
        revision: outcome.revision,
        summary: outcome.message,
        details: capped(details),
      },
    ];
  }
  const recovered = extra.previousSync !== undefined && FAILURE_STATES.has(extra.previousSync);
  const { counts } = outcome;
  const events: NotificationEvent[] = [
    {
      ...base,
      topic: 'sync',
      state: recovered ? 'recovered' : 'applied',
      severity: 'info',
      reason: 'ReconciliationSucceeded',
      revision: outcome.revision,
      summary:
        `${recovered ? 'recovered: ' : ''}applied revision ${outcome.revision}: ` +
        `${counts.created} created, ${counts.configured} configured, ${counts.pruned} pruned`,
      details: capped([
        ...(outcome.changes?.created ?? []).map((name) => `${name}: created`),
        ...(outcome.changes?.configured ?? []).map((name) => `${name}: configured`),
        ...(outcome.changes?.pruned ?? []).map((name) => `${name}: pruned`),
      ]),
    },
  ];
  if (outcome.drift !== undefined && outcome.drift.length > 0) {
    events.push(driftEvent(base, outcome.revision, 'driftDetected', outcome.drift));
  } else if (extra.steady === true && outcome.corrections !== undefined && outcome.corrections.length > 0) {
    events.push(driftEvent(base, outcome.revision, 'driftCorrected', outcome.corrections));
  }
  if (extra.fighting !== undefined && extra.fighting.length > 0) {
    events.push({
      ...base,
      topic: 'fight',
      state: 'fighting',
      severity: 'warning',
      reason: 'Fighting',
      revision: outcome.revision,
      summary: `${extra.fighting.length} object(s) changed back on three runs in a row: another writer fights this ApplySet`,
      details: capped([...extra.fighting]),
    });
  }
  return events;
}

/**
 * A revision not applied before is being applied: only a forge is told (its commit marked pending,
 * until the outcome marks it success or failure); chat would hear of it twice.
 */
export function applyingEvent(
  applySet: { readonly namespace: string; readonly name: string },
  revision: string,
): NotificationEvent {
  return {
    namespace: applySet.namespace,
    name: applySet.name,
    topic: 'sync',
    state: 'progressing',
    severity: 'info',
    reason: 'Progressing',
    revision,
    summary: `applying revision ${revision}`,
    details: [],
  };
}

function failureState(outcome: Exclude<ReconcileOutcome, { kind: 'applied' }>): NotificationState {
  if (outcome.reason === 'PruneLimitExceeded') return 'pruneWaiting';
  if (outcome.reason === 'HealthCheckFailed') return 'healthTimeout';
  return outcome.kind === 'stalled' ? 'stalled' : 'failed';
}

function driftEvent(
  base: { readonly namespace: string; readonly name: string },
  revision: string,
  state: 'driftDetected' | 'driftCorrected',
  objects: readonly { readonly object: string; readonly fields: readonly string[] }[],
): NotificationEvent {
  return {
    ...base,
    topic: 'drift',
    state,
    severity: state === 'driftDetected' ? 'warning' : 'info',
    reason: state === 'driftDetected' ? 'DriftDetected' : 'DriftCorrected',
    revision,
    summary: `${objects.length} object(s) ${state === 'driftDetected' ? 'drifted from Git (left alone)' : 'changed back to Git'}`,
    details: capped(objects.map((o) => `${o.object}: ${o.fields.join(', ')}`)),
  };
}

function capped(lines: readonly string[]): string[] {
  if (lines.length <= DETAIL_LIMIT) return [...lines];
  return [...lines.slice(0, DETAIL_LIMIT), `... and ${lines.length - DETAIL_LIMIT} more`];
}

/**
 * What makes two events the same message: ApplySet, strand, state and revision. The same failure at
 * the same revision on every interval is one message, not one per interval.
 */
export function dedupeKeyOf(event: NotificationEvent): string {
  return `${event.namespace}/${event.name}|${newsKeyOf(event)}`;
}

/**
 * What one run of an ApplySet has to tell, the ApplySet left out: the notifier keeps it per ApplySet to
 * tell news from a repeat, and a fleet at one revision shares one instance of it.
 */
export function newsOf(events: readonly NotificationEvent[]): string {
  return sharedString(events.map((event) => `${event.topic}:${newsKeyOf(event)}`).join(','));
}

/** dedupeKeyOf with the ApplySet left out: the state and revision. */
function newsKeyOf(event: NotificationEvent): string {
  // Recovered is applied after a failure: the next interval's apply of that revision is no news.
  const state = event.state === 'recovered' ? 'applied' : event.state;
  return `${state}|${event.revision ?? ''}`;
}
