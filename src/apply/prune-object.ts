import { rethrowAbort } from '../errors/rethrow-abort.js';
import { liveUid } from '../inventory/live-state.js';
import { describeObjectRef } from '../manifests/object-ref.js';
import type { PruneAction } from '../plan/plan.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import { messageOf } from '../errors/message-of.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { deleteExactly } from './delete-exactly.js';
import { guardHolderPrune } from './guard-holder-prune.js';
import type { PruningSet } from '../plan/objects-of-others.js';
import { locationIn } from './object-location.js';
import type { RunContext } from './run-context.js';

/**
 * What a prune wave uses: the set and every deletion this run plans, whether an apply failed, and
 * the adapters its deletes and holder checks go through.
 */
export type PruneContext = PruningSet &
  Pick<RunContext, 'api' | 'mapper' | 'kubeClient' | 'concurrency'> & {
    readonly dryRun: boolean;
    readonly signal: AbortSignal | undefined;
    readonly applyFailed: boolean;
  };

/**
 * One prune candidate, as an outcome: kept with the plan's reason, postponed after a failed apply,
 * kept or released when it holds objects of others, else deleted exactly (uid precondition).
 */
export async function pruneAction(
  action: PruneAction,
  context: PruneContext,
): Promise<ObjectOutcome | undefined> {
  const { ref } = action;
  if (action.type === 'skip') {
    if (action.reason === 'already-absent') return undefined;
    if (action.reason === 'dry-run') return { action: 'would-prune', ref };
    return {
      action: 'prune-skipped',
      ref,
      reason: skipReason(action),
      ...(action.reason === 'unknown-read' ? { incomplete: true } : {}),
      ...(action.reason === 'owned-by-other' && action.owner !== undefined ? { ownedBy: action.owner } : {}),
    };
  }
  if (context.applyFailed && !context.dryRun) {
    // As Flux does: a failed apply stops the prune, so a renamed object is not deleted before its
    // replacement exists. The object stays in the inventory and is judged again next run.
    return { action: 'prune-skipped', ref, reason: 'postponed: an object of this run failed to apply' };
  }
  const { signal, dryRun } = context;
  const kept = await guardHolderPrune(action, context);
  if (kept !== undefined) return kept;
  if (dryRun) return { action: 'would-prune', ref };
  try {
    const mapping = await context.mapper.resolveGroupKind(ref.group, ref.kind, signal);
    await deleteExactly(context, locationIn(mapping, ref.namespace), ref.name, liveUid(action.live));
    return { action: 'pruned', ref };
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound) return { action: 'pruned', ref };
    if (error instanceof KubeApiError && error.status === 409) {
      return {
        action: 'prune-skipped',
        ref,
        reason: 'the object was replaced since it was read; judged again next run',
        incomplete: true,
      };
    }
    rethrowAbort(error);
    return { action: 'failed', ref, message: `prune failed: ${messageOf(error)}`, cause: error };
  }
}

function skipReason(action: Extract<PruneAction, { type: 'skip' }>): string {
  const users = (action.usedBy ?? []).map(describeObjectRef).join(', ');
  switch (action.reason) {
    case 'namespace-still-used':
      return `kept: objects that stay live in it (${users})`;
    case 'crd-still-used':
      return `kept: custom resources of it stay (${users})`;
    case 'owned-by-other':
      return `kept: owned by another set (apply-owner ${action.owner ?? '?'})`;
    case 'not-owned':
      return "kept: it does not carry this set's apply-owner annotation (it was never taken over, e.g. its own apply failed, or the annotation was removed)";
    case 'prune-disabled':
      return 'kept: annotated applyset.dev/prune: disabled';
    case 'unknown-read':
      return `kept: it could not be read (${messageOf(action.error)})`;
    case 'already-absent':
      return 'already gone';
    case 'dry-run':
      return 'kept: spec.prune is DryRun';
  }
}
