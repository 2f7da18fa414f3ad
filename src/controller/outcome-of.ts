import type { ApplySetResult } from '../apply/apply-set-contract.js';
import { classifyFailure } from '../errors/classify-failure.js';
import { describeManifestSource } from '../manifests/manifest-error.js';
import { describeObjectRef, objectRefKey } from '../manifests/object-ref.js';
import type { ApplySetObjectError } from '../api/applyset-types.js';
import type { Correction } from '../api/fight-tracker.js';
import type { OutcomeCounts, ReconcileOutcome, WouldPrune } from '../api/reconcile-outcome.js';

export const zeroCounts: OutcomeCounts = {
  created: 0,
  configured: 0,
  unchanged: 0,
  pruned: 0,
  failed: 0,
  conflicts: 0,
};

/** The engine's per-object results tallied: counts, and the objects each kind of report names. */
function tally(outcomes: ApplySetResult['outcomes']) {
  const counts = { ...zeroCounts, pruneSkipped: 0, adopted: 0 };
  const errors: ApplySetObjectError[] = [];
  const pruneErrors: ApplySetObjectError[] = [];
  const adopted: string[] = [];
  // What changed, as kubectl names objects (`deployment.apps/web -n shop`), for the event.
  const changes = { created: [] as string[], configured: [] as string[], pruned: [] as string[] };
  const serverSide: string[] = [];
  // Per-object failures keep the intent of their cause: a manifest that cannot be merged stalls the run.
  const mergeErrors: ApplySetObjectError[] = [];
  // An object left Git but names another set as owner: kept. Said aloud, since the mark may be forged.
  const keptForOthers: ApplySetObjectError[] = [];
  const safeModes = {
    drift: [] as Correction[],
    corrections: [] as Correction[],
    wouldPrune: [] as WouldPrune[],
  };
  for (const outcome of outcomes) {
    switch (outcome.action) {
      case 'created':
      case 'configured':
      case 'unchanged':
      case 'pruned':
        counts[outcome.action] += 1;
        if (outcome.action !== 'unchanged') changes[outcome.action].push(describeObjectRef(outcome.ref));
        if (outcome.action !== 'pruned' && outcome.serverSide !== undefined) {
          serverSide.push(`${describeObjectRef(outcome.ref)} (${outcome.serverSide})`);
        }
        if (outcome.adopted === true) {
          counts.adopted += 1;
          adopted.push(objectRefKey(outcome.ref));
        }
        noteSafeModes(outcome, safeModes);
        break;
      case 'conflict':
      case 'failed': {
        if (outcome.action === 'conflict') counts.conflicts += 1;
        else counts.failed += 1;
        const from = outcome.source === undefined ? '' : `${describeManifestSource(outcome.source)}: `;
        const error = { object: objectRefKey(outcome.ref), message: `${from}${outcome.message}` };
        errors.push(error);
        if (outcome.action === 'failed' && outcome.cause !== undefined) {
          const failure = classifyFailure(outcome.cause);
          if (failure.intent === 'stalled' && failure.reason === 'MergeFailed') mergeErrors.push(error);
        }
        break;
      }
      case 'prune-skipped':
        if (outcome.ownedBy !== undefined) {
          keptForOthers.push({ object: objectRefKey(outcome.ref), message: `not pruned: ${outcome.reason}` });
        }
        if (outcome.incomplete === true) {
          counts.pruneSkipped += 1;
          pruneErrors.push({ object: objectRefKey(outcome.ref), message: `not pruned: ${outcome.reason}` });
        }
        break;
      case 'would-prune':
        safeModes.wouldPrune.push({
          object: objectRefKey(outcome.ref),
          name: describeObjectRef(outcome.ref),
        });
        break;
      case 'would-create':
      case 'would-configure':
        break;
    }
  }
  return { counts, errors, pruneErrors, adopted, keptForOthers, mergeErrors, changes, serverSide, safeModes };
}

/** Drift left alone (driftMode Warn), and what a write changed back (a correction, if the revision was applied before). */
function noteSafeModes(
  outcome: Extract<
    ApplySetResult['outcomes'][number],
    { action: 'created' | 'configured' | 'unchanged' | 'pruned' }
  >,
  notes: { drift: Correction[]; corrections: Correction[] },
): void {
  const object = objectRefKey(outcome.ref);
  if (outcome.drift !== undefined && outcome.drift.length > 0)
    notes.drift.push({ object, fields: outcome.drift });
  if (outcome.action === 'configured') notes.corrections.push({ object, fields: outcome.changed ?? [] });
  // Created although the set holds it: someone deleted it.
  if (outcome.action === 'created') notes.corrections.push({ object, fields: ['(the object was deleted)'] });
}

/** The engine's per-object results as counts, errors and one outcome. */
export function outcomeOf(result: ApplySetResult, revision: string): ReconcileOutcome {
  const tallied = tally(result.outcomes);
  const { counts, errors, pruneErrors, mergeErrors } = tallied;
  const first = errors[0];
  const detail = first === undefined ? '' : `: ${first.object}: ${first.message}`;
  if (counts.conflicts > 0) {
    return {
      kind: 'stalled',
      reason: 'OwnershipConflict',
      message: `${counts.conflicts} object(s) in conflict with another owner, left untouched${detail}`,
      revision,
      counts,
      errors,
    };
  }
  const merge = mergeErrors[0];
  if (merge !== undefined) {
    return {
      kind: 'stalled',
      reason: 'MergeFailed',
      message: `${mergeErrors.length} object(s) cannot be merged with the live object, fix the manifest: ${merge.object}: ${merge.message}`,
      revision,
      counts,
      errors,
    };
  }
  if (counts.failed > 0 || !result.completed) {
    return {
      kind: 'retryable',
      reason: 'ApplyFailed',
      message: `${counts.failed} object(s) failed to apply or prune${detail}`,
      revision,
      counts,
      errors,
    };
  }
  // Everything was applied, but objects that left Git could not be judged: they stay in the
  // inventory and are judged again after a backoff; the user must see that the prune is incomplete.
  const skipped = pruneErrors[0];
  if (skipped !== undefined) {
    return {
      kind: 'retryable',
      reason: 'PruneIncomplete',
      message: `applied, but ${counts.pruneSkipped} object(s) that left Git were not pruned: ${skipped.object}: ${skipped.message}`,
      revision,
      counts,
      errors: pruneErrors,
    };
  }
  return (
    unhealthyOutcome(result, revision, counts) ?? appliedOutcome(tallied, revision, result.preDeleteHooks)
  );
}

/**
 * spec.wait: everything was applied, but Ready means healthy. Each object that is not is named with
 * why (`deployment.apps/web -n shop: 1 of 3 replicas available`); it is judged again after a backoff.
 */
function unhealthyOutcome(
  result: ApplySetResult,
  revision: string,
  counts: OutcomeCounts,
): ReconcileOutcome | undefined {
  const unhealthy = (result.health ?? []).filter((report) => report.status !== 'Current');
  const firstUnhealthy = unhealthy[0];
  if (firstUnhealthy === undefined) return undefined;
  const healthErrors = unhealthy.map((report) => ({
    object: objectRefKey(report.ref),
    message: `${report.status}: ${report.message}`,
  }));
  const why = result.healthTimedOut === true ? 'not ready within spec.timeout' : 'failed';
  return {
    kind: 'retryable',
    reason: 'HealthCheckFailed',
    message: `applied, but ${unhealthy.length} object(s) ${why}: ${describeObjectRef(firstUnhealthy.ref)}: ${firstUnhealthy.message}`,
    revision,
    counts,
    errors: healthErrors,
  };
}

/** The whole set in place, with what the events and the safe modes report. */
function appliedOutcome(
  tallied: ReturnType<typeof tally>,
  revision: string,
  preDeleteHooks: number | undefined,
): ReconcileOutcome {
  const { counts, adopted, keptForOthers, changes, serverSide, safeModes } = tallied;
  return {
    kind: 'applied',
    revision,
    counts,
    ...(preDeleteHooks === undefined ? {} : { preDeleteHooks }),
    ...(adopted.length === 0 ? {} : { adopted }),
    changes,
    ...(serverSide.length === 0 ? {} : { serverSide }),
    ...(keptForOthers.length === 0 ? {} : { keptForOthers }),
    ...(safeModes.drift.length === 0 ? {} : { drift: safeModes.drift }),
    ...(safeModes.corrections.length === 0 ? {} : { corrections: safeModes.corrections }),
    ...(safeModes.wouldPrune.length === 0 ? {} : { wouldPrune: safeModes.wouldPrune }),
  };
}
