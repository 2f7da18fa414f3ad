import { encodeGoJson } from '../merge/encode-go-json.js';
import type { JsonValue } from '../manifests/json-value.js';
import { randomBytes } from 'node:crypto';
import type { ApplySetEngine } from '../apply/apply-set-contract.js';
import type { GitSource } from '../git/git-source.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { ControllerMetrics, ReconcileResult } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import { createApplySetApi, type ApplySetApi } from './applyset-api.js';
import { durationOr, subjectOf } from './applyset-subject.js';
import {
  APPLYSET_FINALIZER,
  DEFAULT_INTERVAL_MS,
  DEFAULT_MAX_RETRY_INTERVAL_MS,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type ApplySet,
  type ApplySetStatus,
} from '../api/applyset-types.js';
import { resolveApplySetSpec } from '../api/resolve-applyset-spec.js';
import { checkDependencies } from './check-dependencies.js';
import type { EventRecorder } from './event-recorder.js';
import { fetchAndApply, type RunOutcome } from './fetch-and-apply.js';
import { createFightTracker, type FightVerdict } from '../api/fight-tracker.js';
import { finalize } from './finalize-applyset.js';
import { mapReconcileOutcome } from '../api/map-reconcile-outcome.js';
import { zeroCounts } from './outcome-of.js';
import type { Requeue } from '../api/requeue.js';
import { COMPRESSED_INVENTORY_KEY } from '../inventory/inventory-encoding.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';

export { impersonatedUser } from './applyset-subject.js';
export { outcomeOf } from './outcome-of.js';

export interface ReconcilerDeps {
  /** The controller's own identity: the ApplySet, its finalizer, status and inventory. */
  readonly client: KubeClient;
  /** The engine acting as `user` (impersonated) or as the controller itself (undefined). */
  readonly engineFor: (user: string | undefined) => ApplySetEngine;
  /** A client reading as `user` (undefined: the controller): the Git credentials Secret is read with it. */
  readonly readerAs: (user: string | undefined) => KubeClient;
  /**
   * `--allow-nested-applysets`: an ApplySet's manifests may hold ApplySets (app of apps), applied as
   * its account, which then needs rights on applysets. Default false: such manifests are refused.
   */
  readonly allowNestedApplySets?: boolean;
  /**
   * `--default-service-account`: the ServiceAccount, in the ApplySet's own namespace, that an ApplySet
   * without spec.serviceAccountName is applied as. Undefined: such an ApplySet is applied as the controller.
   */
  readonly defaultServiceAccountName?: string | undefined;
  /**
   * `--allow-secret-refs-from`: the namespaces whose Secrets an ApplySet of another namespace may name in
   * spec.source.secretRef. Empty (the default): a Secret is only ever read from the ApplySet's own namespace.
   */
  readonly allowSecretRefsFrom: ReadonlySet<string>;
  /**
   * `--no-cross-namespace-refs`: said in a Secret's refusal, so the user knows which setting refused;
   * a spec.dependsOn of another namespace is refused under it.
   */
  readonly noCrossNamespaceRefs: boolean;
  readonly gitSource: GitSource;
  readonly recordEvent: EventRecorder;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly now: () => number;
  /** Aborted when the controller must stop at once (after the shutdown grace period). */
  readonly signal: AbortSignal;
}

/** One reconcile of the ApplySet `namespace/name`; the queue calls it and schedules the next. */
export type Reconciler = (key: string) => Promise<Requeue>;

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const api = createApplySetApi(deps.client);
  const fights = createFightTracker();

  return async (key) => {
    const [namespace = '', name = ''] = key.split('/');
    const log = deps.logger.child({ applyset: key, reconcileId: randomBytes(4).toString('hex') });
    const started = deps.now();
    const finish = (result: ReconcileResult, requeue: Requeue): Requeue => {
      deps.metrics.observeReconcile(result, (deps.now() - started) / 1000, { namespace, name });
      log.debug({ result, requeue }, 'reconcile finished');
      return requeue;
    };

    // 1. Read the ApplySet; gone means nothing to do (its children were handled by the finalizer).
    const read = await api.get(namespace, name, deps.signal);
    if (read === undefined) {
      fights.forget(key);
      deps.metrics.setReady(namespace, name, undefined);
      return finish('deleted', { kind: 'none' });
    }

    // 2. Deleted: prune every child (deletionPolicy Delete) or leave them (Orphan), then let it go.
    if (read.metadata.deletionTimestamp !== undefined) {
      return finish('deleted', await finalize(deps, api, read, log));
    }

    // 3. Hold the finalizer, so a deletion waits until the children are handled. An ApplySet that
    // records no children yet gets it with the engine's inventory widen, the write before any child
    // (parentOf); one that records some and lost it gets it back now, whatever this run does next.
    // From here on the run works on the ApplySet as the server last answered (the GET, or this PATCH):
    // every later write of it is conditional on that object's resourceVersion, and the engine takes
    // it rather than GET it again.
    const held = read.metadata.finalizers ?? [];
    const applySet =
      !held.includes(APPLYSET_FINALIZER) && recordsChildren(read)
        ? await api.setFinalizers(read, [...held, APPLYSET_FINALIZER], deps.signal)
        : read;

    // 4. Suspended: no fetch, no write, no status change, until the spec changes.
    if (applySet.spec.suspend === true) {
      log.debug({}, 'suspended');
      return finish('suspended', { kind: 'none' });
    }

    // 5-8. Resolve the spec, fetch Git, load the files, apply and prune: an outcome, never a throw.
    const run = await resolveAndRun(deps, api, applySet, log);

    // Fight detection counts only runs whose changes were drift (a revision and spec applied before).
    const fought =
      run.outcome.kind === 'applied' && run.steady === true
        ? fights.observe(key, run.outcome.corrections ?? [])
        : fights.current(key);

    // 9. Write the status once, record the events, count the objects.
    const requeue = await report(
      deps,
      api,
      applySet,
      { ...run, fought },
      run.parentResourceVersion ?? applySet.metadata.resourceVersion,
      log,
    );
    if (requeue === 'conflict') {
      return finish('retryable', { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS });
    }
    return finish(run.outcome.kind === 'applied' ? 'success' : run.outcome.kind, requeue);
  };
}

/** Whether the ApplySet's inventory lists anything (plain or compressed). */
function recordsChildren(applySet: ApplySet): boolean {
  const annotations = applySet.metadata.annotations ?? {};
  const plain = annotations[MetadataKeys.lastAppliedObjects];
  return (plain !== undefined && plain.trim() !== '') || annotations[COMPRESSED_INVENTORY_KEY] !== undefined;
}

/** Steps 5-8: an invalid spec stalls; a valid one is fetched, loaded, applied and pruned. */
async function resolveAndRun(
  deps: ReconcilerDeps,
  api: ApplySetApi,
  applySet: ApplySet,
  log: Logger,
): Promise<RunOutcome> {
  const resolved = resolveApplySetSpec(applySet.spec);
  if (resolved.ok) {
    // spec.dependsOn: nothing is fetched or applied until every dependency is Ready at its generation.
    const blocked = await checkDependencies(api, applySet, resolved.spec, {
      noCrossNamespaceRefs: deps.noCrossNamespaceRefs,
      signal: deps.signal,
    });
    if (blocked !== undefined) return { outcome: blocked };
    return fetchAndApply(deps, api, applySet, resolved.spec, log);
  }
  return {
    outcome: {
      kind: 'stalled',
      reason: 'InvalidSpec',
      message: `invalid spec: ${resolved.errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
    },
  };
}

/**
 * Step 9: the outcome as status (written once, conditional on `version`), events, metrics and a log
 * line; the requeue, or 'conflict' when a newer writer changed the ApplySet meanwhile.
 */
async function report(
  deps: ReconcilerDeps,
  api: ApplySetApi,
  applySet: ApplySet,
  run: RunOutcome & { readonly fought: Omit<FightVerdict, 'streaks'> },
  version: string | undefined,
  log: Logger,
): Promise<Requeue | 'conflict'> {
  const { outcome } = run;
  const resolved = resolveApplySetSpec(applySet.spec);
  const intervalMs = resolved.ok
    ? resolved.spec.intervalMs
    : durationOr(applySet.spec.interval, DEFAULT_INTERVAL_MS);
  const mapped = mapReconcileOutcome({
    outcome,
    previous: applySet.status,
    generation: applySet.metadata.generation,
    intervalMs,
    retryIntervalMs: resolved.ok
      ? resolved.spec.retryIntervalMs
      : Math.min(intervalMs, DEFAULT_MAX_RETRY_INTERVAL_MS),
    now: new Date(deps.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    handledReconcileAt: applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION],
    ...(run.held === undefined ? {} : { held: run.held }),
    ...(resolved.ok
      ? {
          safeModes: {
            driftMode: resolved.spec.driftMode,
            pruneDryRun: resolved.spec.pruneDryRun,
            fighting: run.fought.fighting,
            newlyFighting: run.fought.newlyFighting,
          },
        }
      : {}),
  });
  // A replica that lost the leadership (or is past its shutdown grace) writes nothing more.
  deps.signal.throwIfAborted();
  // Conditional on the version the run planned on and left: a newer writer (a replica that took
  // over while this one was paused, a spec change) wins, and this run's view is read again.
  // A reconcile that found nothing new writes nothing, its status included: at rest, a fleet costs the
  // API server reads only. (Compared in Go's JSON form, whose key order is fixed.)
  // The run may have written a status on its way (Progressing while waiting for health): the stored
  // status is then that one, while `previous` stays the run's start, so a failure repeated after the
  // wait is still one event.
  const stored = run.storedStatus ?? applySet.status;
  const unchanged =
    stored !== undefined &&
    encodeGoJson(mapped.status as unknown as JsonValue) === encodeGoJson(stored as unknown as JsonValue);
  if (
    !unchanged &&
    (await api.writeStatus(applySet, mapped.status, version, deps.signal)).kind === 'conflict'
  ) {
    log.debug({}, 'the ApplySet changed during the run; reading it again');
    return 'conflict';
  }
  for (const event of mapped.events) await deps.recordEvent(subjectOf(applySet), event);
  recordMetrics(deps, applySet, mapped.status, run);
  const level = outcome.kind === 'applied' ? 'info' : 'warn';
  log[level](
    outcome.kind === 'applied'
      ? { revision: outcome.revision, counts: outcome.counts }
      : { reason: outcome.reason, revision: outcome.revision },
    outcome.kind === 'applied' ? 'reconciled' : `not reconciled: ${outcome.message}`,
  );
  return mapped.requeue;
}

/** The run in the ApplySet's series: Ready, revision, objects by verb, drift and fights. */
function recordMetrics(
  deps: ReconcilerDeps,
  applySet: ApplySet,
  status: ApplySetStatus,
  run: RunOutcome & { readonly fought: Omit<FightVerdict, 'streaks'> },
): void {
  const { outcome } = run;
  const { namespace, name } = applySet.metadata;
  const ready = status.conditions?.find((c) => c.type === 'Ready')?.status;
  deps.metrics.setReady(namespace, name, ready === 'True' ? 1 : ready === 'False' ? 0 : -1);
  deps.metrics.setRevision(namespace, name, status.lastAppliedRevision);
  if (outcome.kind === 'applied' || (outcome.kind !== 'waiting' && outcome.counts !== undefined)) {
    const counts = outcome.counts ?? zeroCounts;
    const of = { namespace, name };
    deps.metrics.countObjects('created', counts.created, of);
    deps.metrics.countObjects('configured', counts.configured, of);
    deps.metrics.countObjects('unchanged', counts.unchanged, of);
    deps.metrics.countObjects('pruned', counts.pruned, of);
    deps.metrics.countObjects('failed', counts.failed, of);
    deps.metrics.countObjects('conflict', counts.conflicts, of);
  }
  if (outcome.kind === 'applied') deps.metrics.countDrift(namespace, name, outcome.drift?.length ?? 0);
  deps.metrics.countFights(namespace, name, run.fought.newlyFighting.length);
}
