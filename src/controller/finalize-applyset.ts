import type { ApplySetEngine, PreDeleteRequest } from '../apply/apply-set-contract.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { classifyFailure } from '../errors/classify-failure.js';
import type { Logger } from '../observability/create-logger.js';
import { parentOf, subjectOf, type ApplySetApi } from '../kube/applyset-api.js';
import { APPLYSET_FINALIZER, DEFAULT_MAX_RETRY_INTERVAL_MS } from '../api/applyset-types.js';
import { mapReconcileOutcome } from '../api/map-reconcile-outcome.js';
import type { Requeue } from '../api/requeue.js';
import type { ApplySetView } from '../api/applyset-view.js';
import { objectsKubeConfigOf } from './cluster-move-step.js';
import { preDeleteHookOutcome, preDeleteRequest, type PreDeleteDeps } from './pre-delete-step.js';
import { deletionTarget, type RemoteDeletionDeps } from './remote-deletion.js';
import { createStatusWriter, mappingInputOf } from './status-writer.js';

/** What the finalizer path needs beyond the reconcile's context: the engines and the sources. */
type FinalizeDeps = RemoteDeletionDeps & PreDeleteDeps;

/**
 * The finalizer path (step 2 of reconcile-applyset.ts): prune every child with an empty set
 * (deletionPolicy Delete), or release them (Orphan: this set's ownership marks come off, so a new
 * ApplySet of the same name adopts them instead of finding them owned by a uid that no longer exists).
 * Before a prune, the PreDelete hooks of the revision last applied run (pre-delete-step.ts); one that
 * fails keeps every child. Only then is the finalizer removed. The spec is the view's lenient one: a deletion goes on whatever
 * else in it is wrong.
 */
export async function finalize(deps: FinalizeDeps, view: ApplySetView): Promise<Requeue> {
  const { api, log } = deps;
  const { applySet, lenient: spec } = view;
  const finalizers = applySet.metadata.finalizers ?? [];
  if (!finalizers.includes(APPLYSET_FINALIZER)) return { kind: 'none' };
  // Like Flux, a suspended object is let go without touching its children.
  if (spec.suspend) log.info({}, 'deleted while suspended: children left untouched');
  let held = applySet;
  if (!spec.suspend) {
    const orphan = spec.deletionPolicy === 'Orphan';
    const { namespace } = applySet.metadata;
    // The same account as the applies: the default one when the spec names none.
    const { user } = view.account;
    // Where the objects are: a spec.kubeConfig changed since the last apply has not moved them yet.
    const target = await deletionTarget(deps, applySet, objectsKubeConfigOf(applySet, spec.kubeConfig), user);
    if (target.kind === 'retry') return target.requeue;
    if (target.kind === 'engine') {
      // As Argo CD, only a deletion that deletes the objects runs PreDelete hooks; Orphan runs none.
      const preDelete = orphan ? { value: undefined } : await preDeleteRequest(deps, view);
      if ('done' in preDelete) return keepChildren(deps, view, preDelete.done);
      const released = await releaseChildren(deps, view, target.engineFor(user), {
        orphan,
        target: spec.targetNamespace ?? namespace,
        preDelete: preDelete.value,
      });
      if ('kind' in released) return released;
      // The engine wrote the ApplySet (its inventory): the finalizer comes off that version, not a
      // conflict and a second pass, which would run the PreDelete hooks again.
      const { resourceVersion } = released;
      if (resourceVersion !== undefined)
        held = { ...applySet, metadata: { ...applySet.metadata, resourceVersion } };
    }
  }
  await api.setFinalizers(
    held,
    finalizers.filter((f) => f !== APPLYSET_FINALIZER),
    deps.signal,
  );
  return { kind: 'none' };
}

/**
 * Prunes (or, orphan, releases) every child with `engine`; a requeue when that failed, else the
 * ApplySet's resourceVersion after the engine's writes.
 */
async function releaseChildren(
  deps: FinalizeDeps,
  view: ApplySetView,
  engine: ApplySetEngine,
  { orphan, target, preDelete }: { orphan: boolean; target: string; preDelete: PreDeleteRequest | undefined },
): Promise<Requeue | { readonly resourceVersion: string | undefined }> {
  const { api, log } = deps;
  const { applySet } = view;
  const verb = orphan ? 'releasing' : 'pruning';
  try {
    const result = await engine({
      input: { files: [], parent: parentOf(applySet), defaultNamespace: target },
      write: { dryRun: false, force: false, adopt: false },
      prune: orphan ? { mode: 'off' } : { mode: 'delete', allowEmpty: true },
      release: orphan,
      ...(preDelete === undefined ? {} : { preDelete }),
      signal: deps.signal,
    });
    const failed = result.outcomes.filter((o) => o.action === 'failed');
    if (failed.length > 0 || !result.completed) {
      const message = `${verb} the children failed: ${failed.map((o) => (o.action === 'failed' ? o.message : '')).join('; ')}`;
      log.warn({ failed: failed.length }, message);
      await deps.recordEvent(subjectOf(applySet), { type: 'Warning', reason: 'PruneFailed', message });
      return { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS };
    }
    const count = result.outcomes.filter((o) =>
      orphan ? o.action === 'prune-skipped' && o.released === true : o.action === 'pruned',
    ).length;
    if (!orphan) deps.metrics.countObjects('pruned', count);
    log.info(
      { [orphan ? 'released' : 'pruned']: count },
      `deleted: children ${orphan ? 'orphaned' : 'pruned'}`,
    );
    return { resourceVersion: result.parentResourceVersion };
  } catch (error) {
    const held = preDeleteHookOutcome(error);
    if (held !== undefined) return keepChildren(deps, view, held);
    const failure = classifyFailure(error);
    // The ApplySet went while it was read: nothing is left to let go of.
    if (failure.reason === 'ParentNotFound') return { kind: 'none' };
    // A damaged inventory cannot be pruned from, however often it is tried: the deletion stalls.
    if (failure.reason === 'InventoryInvalid') {
      return stallDeletion(deps, api, view, failure.message, log);
    }
    const what = failure.unexpected ? 'failed unexpectedly, a bug' : 'failed';
    log[failure.unexpected ? 'error' : 'warn']({ err: error }, `deleted: ${verb} the children ${what}`);
    await deps.recordEvent(subjectOf(applySet), {
      type: 'Warning',
      reason: 'PruneFailed',
      message: `${verb} the children failed: ${failure.message}`,
    });
    return { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS };
  }
}

/**
 * The PreDelete hooks hold the deletion (not read, or one failed): every child is kept, with the
 * finalizer; the status and a Warning event say why, and the deletion is retried with back-off.
 */
async function keepChildren(
  deps: FinalizeDeps,
  view: ApplySetView,
  outcome: ReconcileOutcome,
): Promise<Requeue> {
  const { applySet } = view;
  const mapped = mapReconcileOutcome({ outcome, ...mappingInputOf(view, deps.now()) });
  deps.log.warn({ reason: outcome.kind === 'applied' ? '' : outcome.reason }, 'deleted: children kept');
  await createStatusWriter(deps, applySet).write(mapped.status);
  for (const event of mapped.events) await deps.recordEvent(subjectOf(applySet), event);
  return mapped.requeue;
}

/**
 * deletionPolicy Delete on a damaged inventory: nothing can be pruned safely, and retrying cannot
 * mend it. The deletion waits, stalled, with the way out in the message; a change of the spec
 * (deletionPolicy: Orphan) is a new generation, which the watch hands back at once.
 */
async function stallDeletion(
  deps: FinalizeDeps,
  api: ApplySetApi,
  view: ApplySetView,
  damage: string,
  log: Logger,
): Promise<Requeue> {
  const { applySet } = view;
  const message = `${damage}; the ApplySet is being deleted with deletionPolicy Delete and nothing can be pruned from a damaged inventory: fix the line, or set spec.deletionPolicy: Orphan to let the ApplySet go and leave its children in place`;
  const mapped = mapReconcileOutcome({
    outcome: { kind: 'stalled', reason: 'InventoryInvalid', message },
    ...mappingInputOf(view, deps.now()),
  });
  log.warn({ reason: 'InventoryInvalid' }, message);
  await createStatusWriter({ ...deps, api, log }, applySet).write(mapped.status);
  for (const event of mapped.events) await deps.recordEvent(subjectOf(applySet), event);
  return mapped.requeue;
}
