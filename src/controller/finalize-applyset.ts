import { classifyFailure } from '../errors/classify-failure.js';
import type { Logger } from '../observability/create-logger.js';
import type { ApplySetApi } from './applyset-api.js';
import { durationOr, impersonatedUser, parentOf, subjectOf } from './applyset-subject.js';
import {
  APPLYSET_FINALIZER,
  DEFAULT_INTERVAL_MS,
  DEFAULT_MAX_RETRY_INTERVAL_MS,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type ApplySet,
} from '../api/applyset-types.js';
import { mapReconcileOutcome } from '../api/map-reconcile-outcome.js';
import type { ReconcilerDeps } from './reconcile-applyset.js';
import type { Requeue } from '../api/requeue.js';

/**
 * The finalizer path: prune every child with an empty set (deletionPolicy Delete), or release them
 * (Orphan: this set's ownership marks come off, so a new ApplySet of the same name adopts them
 * instead of finding them owned by a uid that no longer exists). Only then is the finalizer removed.
 */
export async function finalize(
  deps: ReconcilerDeps,
  api: ApplySetApi,
  applySet: ApplySet,
  log: Logger,
): Promise<Requeue> {
  const finalizers = applySet.metadata.finalizers ?? [];
  if (!finalizers.includes(APPLYSET_FINALIZER)) return { kind: 'none' };
  const raw = applySet.spec as unknown as Record<string, unknown>;
  // Like Flux, a suspended object is let go without touching its children.
  if (raw['suspend'] === true) {
    log.info({}, 'deleted while suspended: children left untouched');
  } else {
    const orphan = raw['deletionPolicy'] === 'Orphan';
    const { namespace } = applySet.metadata;
    // The same account as the applies: the default one when the spec names none.
    const serviceAccount =
      typeof raw['serviceAccountName'] === 'string'
        ? raw['serviceAccountName']
        : deps.defaultServiceAccountName;
    const target = typeof raw['targetNamespace'] === 'string' ? raw['targetNamespace'] : namespace;
    const verb = orphan ? 'releasing' : 'pruning';
    try {
      const result = await deps.engineFor(impersonatedUser(namespace, serviceAccount))({
        files: [],
        parent: parentOf(applySet),
        defaultNamespace: target,
        prune: !orphan,
        release: orphan,
        allowEmpty: true,
        force: false,
        adopt: false,
        dryRun: false,
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
    } catch (error) {
      const failure = classifyFailure(error);
      // The ApplySet went while it was read: nothing is left to let go of.
      if (failure.reason === 'ParentNotFound') return { kind: 'none' };
      // A damaged inventory cannot be pruned from, however often it is tried: the deletion stalls.
      if (failure.reason === 'InventoryInvalid') {
        return stallDeletion(deps, api, applySet, failure.message, log);
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
  await api.setFinalizers(
    applySet,
    finalizers.filter((f) => f !== APPLYSET_FINALIZER),
    deps.signal,
  );
  return { kind: 'none' };
}

/**
 * deletionPolicy Delete on a damaged inventory: nothing can be pruned safely, and retrying cannot
 * mend it. The deletion waits, stalled, with the way out in the message; a change of the spec
 * (deletionPolicy: Orphan) is a new generation, which the watch hands back at once.
 */
async function stallDeletion(
  deps: ReconcilerDeps,
  api: ApplySetApi,
  applySet: ApplySet,
  damage: string,
  log: Logger,
): Promise<Requeue> {
  const message = `${damage}; the ApplySet is being deleted with deletionPolicy Delete and nothing can be pruned from a damaged inventory: fix the line, or set spec.deletionPolicy: Orphan to let the ApplySet go and leave its children in place`;
  const intervalMs = durationOr(applySet.spec.interval, DEFAULT_INTERVAL_MS);
  const mapped = mapReconcileOutcome({
    outcome: { kind: 'stalled', reason: 'InventoryInvalid', message },
    previous: applySet.status,
    generation: applySet.metadata.generation,
    intervalMs,
    retryIntervalMs: Math.min(intervalMs, DEFAULT_MAX_RETRY_INTERVAL_MS),
    now: new Date(deps.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    handledReconcileAt: applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION],
  });
  log.warn({ reason: 'InventoryInvalid' }, message);
  await api.writeStatus(applySet, mapped.status, applySet.metadata.resourceVersion, deps.signal);
  for (const event of mapped.events) await deps.recordEvent(subjectOf(applySet), event);
  return mapped.requeue;
}
