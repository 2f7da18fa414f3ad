import {
  MAX_STATUS_ERRORS,
  type ApplySetCondition,
  type ApplySetErrors,
  type ApplySetObjectError,
  type ApplySetStatus,
  type ConditionStatus,
} from './applyset-types.js';
import type { Correction } from './fight-tracker.js';
import type { ReconcileEvent, ReconcileOutcome } from './reconcile-outcome.js';
import type { DriftMode } from './safe-mode-spec.js';

/*
 * The safe modes in status and events: Drifted and status.drift (driftMode Warn), status.wouldPrune
 * (prune DryRun), Fighting (fight detection). Pure: mapReconcileOutcome calls it.
 */

export interface SafeModeInput {
  readonly driftMode: DriftMode;
  readonly pruneDryRun: boolean;
  /** The objects corrected FIGHT_RUNS times in a row or more, as the fight tracker counts them. */
  readonly fighting: readonly Correction[];
  /** Those that became so on this run. */
  readonly newlyFighting: readonly Correction[];
}

interface SafeModeReport {
  readonly conditions: readonly ApplySetCondition[];
  /** Keys to set on the status; `null` removes a list the mode no longer keeps. */
  readonly status: Pick<ApplySetStatus, 'drift' | 'wouldPrune'>;
  readonly events: readonly ReconcileEvent[];
}

type MakeCondition = (
  type: ApplySetCondition['type'],
  status: ConditionStatus,
  reason: string,
  message: string,
) => ApplySetCondition;

/** Fields named per object, and objects per message, before the rest is only counted. */
const FIELDS_SHOWN = 5;
const OBJECTS_SHOWN = 5;

/** After an applied run: the safe-mode conditions, status lists and events. */
export function reportSafeModes(
  outcome: Extract<ReconcileOutcome, { kind: 'applied' }>,
  previous: ApplySetStatus | undefined,
  input: SafeModeInput,
  condition: MakeCondition,
): SafeModeReport {
  const conditions: ApplySetCondition[] = [];
  const events: ReconcileEvent[] = [];
  const status: { -readonly [K in keyof SafeModeReport['status']]: SafeModeReport['status'][K] } = {};
  const previousCondition = (type: string) => previous?.conditions?.find((c) => c.type === type);

  if (input.driftMode === 'Warn') {
    const drift = outcome.drift ?? [];
    const drifted = driftedCondition(drift, outcome.revision);
    const { message } = drifted;
    conditions.push(condition('Drifted', drifted.status, drifted.reason, message));
    status.drift = boundedList(drift.map((d) => ({ object: d.object, message: driftItemMessage(d.fields) })));
    const before = previousCondition('Drifted');
    if (drift.length > 0 && !(before?.status === 'True' && before.message === message))
      events.push({ type: 'Warning', reason: 'DriftDetected', message });
  } else if (previous?.drift != null) status.drift = null;

  if (input.pruneDryRun) {
    const would = outcome.wouldPrune ?? [];
    status.wouldPrune = boundedList(
      would.map((w) => ({
        object: w.object,
        message: 'would be pruned (spec.prune: DryRun); nothing was deleted',
      })),
    );
    const same =
      previous?.wouldPrune != null &&
      previous.wouldPrune.totalCount === would.length &&
      previous.wouldPrune.items.every((item, index) => item.object === would[index]?.object);
    if (would.length > 0 && !same) {
      const names = would.slice(0, 10).map((w) => w.name);
      const more = would.length > 10 ? ` (+${would.length - 10} more)` : '';
      events.push({
        type: 'Normal',
        reason: 'PruneDryRun',
        message: `${would.length} object(s) would be pruned; spec.prune is DryRun, nothing was deleted: ${names.join(', ')}${more}`,
      });
    }
  } else if (previous?.wouldPrune != null) status.wouldPrune = null;

  const fighting = fightingCondition(input, previousCondition('Fighting'), condition);
  if (fighting !== undefined) conditions.push(fighting);
  if (input.newlyFighting.length > 0) {
    events.push({
      type: 'Warning',
      reason: 'Fighting',
      message: `corrected on 3 runs in a row, someone keeps changing it back: ${describeCorrections(input.newlyFighting)}`,
    });
  }
  return { conditions, status, events };
}

/**
 * The Drifted condition driftMode Warn writes for the drift a run found and left alone; the preview
 * shows the same words for the drift it finds.
 */
export function driftedCondition(
  drift: readonly Correction[],
  revision: string,
): { readonly status: ConditionStatus; readonly reason: string; readonly message: string } {
  if (drift.length === 0)
    return { status: 'False', reason: 'NoDrift', message: `no drift at revision ${revision}` };
  return {
    status: 'True',
    reason: 'DriftDetected',
    message: `${drift.length} object(s) changed on the cluster, not corrected (driftMode Warn): ${describeCorrections(drift)}`,
  };
}

/** One object's entry in status.drift: `changed: data.color, data.size`. */
export function driftItemMessage(fields: readonly string[]): string {
  return `changed: ${describeFields(fields)}`;
}

/** After a run that did not apply: the safe-mode conditions stay as they were. */
export function carriedSafeModeConditions(previous: ApplySetStatus | undefined): ApplySetCondition[] {
  return (previous?.conditions ?? []).filter((c) => c.type === 'Drifted' || c.type === 'Fighting');
}

function fightingCondition(
  input: SafeModeInput,
  before: ApplySetCondition | undefined,
  condition: MakeCondition,
): ApplySetCondition | undefined {
  if (input.fighting.length > 0) {
    const message = `${input.fighting.length} object(s) corrected on 3 or more runs in a row, someone keeps changing them back: ${describeCorrections(input.fighting)}`;
    return condition('Fighting', 'True', 'FightDetected', message);
  }
  // Shown False once a fight was seen, so the end of it is visible; never added to a set that never fought.
  return before === undefined
    ? undefined
    : condition('Fighting', 'False', 'NoFight', 'no object was corrected again');
}

function describeCorrections(corrections: readonly Correction[]): string {
  const shown = corrections.slice(0, OBJECTS_SHOWN).map((c) => `${c.object}: ${describeFields(c.fields)}`);
  const more = corrections.length > OBJECTS_SHOWN ? `; +${corrections.length - OBJECTS_SHOWN} more` : '';
  return `${shown.join('; ')}${more}`;
}

function describeFields(fields: readonly string[]): string {
  const more = fields.length > FIELDS_SHOWN ? ` (+${fields.length - FIELDS_SHOWN} more)` : '';
  return `${fields.slice(0, FIELDS_SHOWN).join(', ')}${more}`;
}

function boundedList(items: readonly ApplySetObjectError[]): ApplySetErrors {
  return {
    items: items.slice(0, MAX_STATUS_ERRORS),
    totalCount: items.length,
    truncated: items.length > MAX_STATUS_ERRORS,
  };
}
