import type { ApplySet, ApplySetCondition } from '../api/applyset-types.js';

/** What a person asks of an ApplySet first, in one word. */
export type FleetState = 'Ready' | 'Progressing' | 'Stalled' | 'Failing' | 'Suspended' | 'Unknown';

/** One row of the fleet page: pure data, from the ApplySet alone. */
export interface FleetRow {
  readonly namespace: string;
  readonly name: string;
  readonly state: FleetState;
  /** The Ready condition's message, or why the state is what it is. */
  readonly message: string;
  readonly revision: string;
  /** RFC 3339, when Ready last changed: how long this revision has been the state shown. */
  readonly since: string | undefined;
  readonly applied: number;
  readonly unchanged: number;
  readonly pruned: number;
  readonly failed: number;
  /** Objects found drifted and left so (driftMode Warn), 0 when none. */
  readonly drifted: number;
  /** Whether another writer is fighting this set over a field (the Fighting condition). */
  readonly fighting: boolean;
  readonly labels: Readonly<Record<string, string>>;
}

function conditionOf(applySet: ApplySet, type: ApplySetCondition['type']): ApplySetCondition | undefined {
  return applySet.status?.conditions?.find((condition) => condition.type === type);
}

/**
 * Ready False reasons that wait on something else rather than report a failure: a dependency not
 * Ready yet, a CRD of the set not Established yet. The controller writes them as a retry too
 * (Reconciling True, ProgressingWithRetry), but nothing of this set went wrong.
 */
const WAITING_REASONS: ReadonlySet<string> = new Set(['DependencyNotReady', 'CrdNotEstablished']);

/**
 * The state by the conditions the controller writes: suspended first (nothing runs, whatever the
 * last run said), then Stalled (it will not get better without a change), Ready, a last attempt that
 * failed (Ready False: the controller retries it with Reconciling True, reason ProgressingWithRetry,
 * but what a person needs to know is that it failed), and a run under way.
 * @internal The unit tests read the state alone.
 */
export function fleetState(applySet: ApplySet): FleetState {
  if (applySet.spec.suspend === true) return 'Suspended';
  if (conditionOf(applySet, 'Stalled')?.status === 'True') return 'Stalled';
  const ready = conditionOf(applySet, 'Ready');
  if (ready?.status === 'True') return 'Ready';
  if (ready?.status === 'False' && !WAITING_REASONS.has(ready.reason)) return 'Failing';
  if (ready !== undefined || conditionOf(applySet, 'Reconciling')?.status === 'True') return 'Progressing';
  return 'Unknown';
}

export function fleetRow(applySet: ApplySet): FleetRow {
  const ready = conditionOf(applySet, 'Ready');
  const summary = applySet.status?.summary ?? {};
  const state = fleetState(applySet);
  return {
    namespace: applySet.metadata.namespace,
    name: applySet.metadata.name,
    state,
    message:
      state === 'Suspended'
        ? 'suspended: not reconciled until resumed'
        : (ready?.message ?? 'not reconciled yet'),
    revision: applySet.status?.lastAppliedRevision ?? '',
    since: ready?.lastTransitionTime,
    applied: summary.applied ?? 0,
    unchanged: summary.unchanged ?? 0,
    pruned: summary.pruned ?? 0,
    failed: summary.failed ?? 0,
    drifted: applySet.status?.drift?.totalCount ?? 0,
    fighting: conditionOf(applySet, 'Fighting')?.status === 'True',
    labels: applySet.metadata.labels ?? {},
  };
}

/** The fleet page's filter, as its GET form sends it. */
export interface FleetFilter {
  readonly namespace: string;
  /** `key=value` or `key`, as a one-term label selector. */
  readonly label: string;
  readonly state: string;
}

export function matchesFilter(row: FleetRow, filter: FleetFilter): boolean {
  if (filter.namespace !== '' && !row.namespace.includes(filter.namespace)) return false;
  if (filter.state !== '' && row.state !== filter.state) return false;
  if (filter.label !== '') {
    const [key = '', value] = filter.label.split('=', 2);
    const actual = row.labels[key.trim()];
    if (actual === undefined || (value !== undefined && actual !== value.trim())) return false;
  }
  return true;
}

/** `3m`, `2h`, `5d`: how long ago, coarsely, as kubectl's AGE column. */
export function ageOf(time: string | undefined, nowMs: number): string {
  if (time === undefined) return '';
  const seconds = Math.max(0, Math.floor((nowMs - Date.parse(time)) / 1000));
  if (Number.isNaN(seconds)) return '';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
