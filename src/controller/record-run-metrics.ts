/**
 * Step 12's metrics: the run in the ApplySet's series (Ready, revision, objects by verb, drift, fights).
 */
import type { ApplySet, ApplySetStatus } from '../api/applyset-types.js';
import type { FightVerdict } from '../api/fight-tracker.js';
import type { EngineOutcome } from './engine-step.js';
import { zeroCounts } from './outcome-of.js';
import type { ReconcileContext } from './reconcile-context.js';

/** The run in the ApplySet's series: Ready, revision, objects by verb, drift and fights. */
export function recordRunMetrics(
  { metrics }: Pick<ReconcileContext, 'metrics'>,
  applySet: ApplySet,
  status: ApplySetStatus,
  run: EngineOutcome & { readonly fought: Pick<FightVerdict, 'newlyFighting'> },
): void {
  const { outcome } = run;
  const { namespace, name } = applySet.metadata;
  const ready = status.conditions?.find((c) => c.type === 'Ready')?.status;
  metrics.setReady(namespace, name, ready === 'True' ? 1 : ready === 'False' ? 0 : -1);
  metrics.setRevision(namespace, name, status.lastAppliedRevision);
  if (outcome.kind === 'applied' || (outcome.kind !== 'waiting' && outcome.counts !== undefined)) {
    const counts = outcome.counts ?? zeroCounts;
    const of = { namespace, name };
    metrics.countObjects('created', counts.created, of);
    metrics.countObjects('configured', counts.configured, of);
    metrics.countObjects('unchanged', counts.unchanged, of);
    metrics.countObjects('pruned', counts.pruned, of);
    metrics.countObjects('failed', counts.failed, of);
    metrics.countObjects('conflict', counts.conflicts, of);
  }
  if (outcome.kind === 'applied') metrics.countDrift(namespace, name, outcome.drift?.length ?? 0);
  metrics.countFights(namespace, name, run.fought.newlyFighting.length);
}
