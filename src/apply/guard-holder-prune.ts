import { rethrowAbort } from '../errors/rethrow-abort.js';
import { liveUid } from '../inventory/live-state.js';
import { messageOf } from '../errors/message-of.js';
import { releaseObject } from './release-object.js';
import { isCustomResourceDefinition, isNamespace } from '../manifests/apply-waves.js';
import { describeObjectsOfOthers, objectsOfOthers, type PruningSet } from '../plan/objects-of-others.js';
import type { PlanStep, PruneAction } from '../plan/plan.js';
import type { ResourceLocation } from '../kube/kube-object-api.js';
import type { RunContext } from './run-context.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { listHeldObjects } from './list-held-objects.js';

/** What the guard uses: the set and its planned deletions, the adapters, and the run's mode. */
type HolderGuardContext = PruningSet &
  Pick<RunContext, 'kubeClient' | 'api' | 'concurrency'> & {
    readonly dryRun: boolean;
    readonly signal: AbortSignal | undefined;
  };

const NAMESPACES: ResourceLocation = { group: '', version: 'v1', resource: 'namespaces', namespace: '' };
const CRDS: ResourceLocation = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespace: '',
};

/** Every deletion the plan holds, with the uid it read: the set's own objects going in this run. */
export function plannedDeletions(steps: readonly PlanStep[]): PruningSet['pruning'] {
  return steps.flatMap((step) =>
    step.type === 'prune-wave'
      ? step.actions.flatMap((action) =>
          action.type === 'delete' ? [{ ref: action.ref, uid: liveUid(action.live) }] : [],
        )
      : [],
  );
}

/**
 * Deleting a Namespace deletes everything in it, and deleting a CRD every custom resource of it, the
 * set's or not. So right before such a delete, what it holds is listed; when anything there is not
 * the set's own object going in this run (nor a control-plane default, see `objectsOfOthers`), the
 * holder is kept and released: its apply-owner annotation and part-of label are removed, and the
 * outcome says `released`, so the inventory drops it and no later run judges it again. Undefined means
 * "go ahead and delete". A check that cannot complete is a failed prune: the holder stays in the
 * inventory and is judged again next run. A dry run checks but writes nothing. Kubernetes has no
 * "delete if empty": an object created between the LIST and the DELETE is not seen, so the LIST is the
 * last step before the DELETE, after every other prune of the run.
 */
export async function guardHolderPrune(
  action: Extract<PruneAction, { type: 'delete' }>,
  context: HolderGuardContext,
): Promise<ObjectOutcome | undefined> {
  const { ref } = action;
  if (!isNamespace(ref) && !isCustomResourceDefinition(ref)) return undefined;
  let others;
  try {
    const held = await listHeldObjects(ref, action.live, { ...context, client: context.kubeClient });
    others = objectsOfOthers(held, context);
  } catch (error) {
    rethrowAbort(error);
    return { action: 'failed', ref, message: `prune refused: ${messageOf(error)}`, cause: error };
  }
  if (others.length === 0) return undefined;
  const holds = describeObjectsOfOthers(others, isNamespace(ref) ? ref.name : '');
  if (context.dryRun) {
    return { action: 'prune-skipped', ref, reason: `${holds}; would be kept and released from the set` };
  }
  try {
    await release(action, context);
  } catch (error) {
    rethrowAbort(error);
    return {
      action: 'failed',
      ref,
      message: `not pruned (${holds}), and releasing it from the set failed: ${messageOf(error)}`,
      cause: error,
    };
  }
  return { action: 'prune-skipped', ref, reason: `${holds}; kept and released from the set`, released: true };
}

async function release(action: Extract<PruneAction, { type: 'delete' }>, context: HolderGuardContext) {
  const location = isNamespace(action.ref) ? NAMESPACES : CRDS;
  await releaseObject(context.api, location, action.ref.name, action.live, context.signal);
}
