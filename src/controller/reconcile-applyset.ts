/**
 * One reconcile of an ApplySet, from its key to the last write of its status, in numbered steps
 * (docs/architecture.md#2-the-path-of-one-reconcile tells the same numbers). Steps 1 to 4 decide whether
 * there is anything to apply; 5 to 11 run it and end in an outcome, never a throw; 12 reports it.
 */
import { hookEvents } from './hook-events.js';
import type { ApplySetRequest, HookRequest } from '../apply/apply-set-contract.js';
import { setMaxListeners } from 'node:events';
import { APPLYSET_FINALIZER, DEFAULT_MAX_RETRY_INTERVAL_MS } from '../api/applyset-types.js';
import { createFightTracker, type FightTracker, type FightVerdict } from '../api/fight-tracker.js';
import { mapReconcileOutcome } from '../api/map-reconcile-outcome.js';
import type { Requeue } from '../api/requeue.js';
import { applySetView, type ApplySetView } from '../api/applyset-view.js';
import { recordsChildren } from './records-children.js';
import type { ReconcileResult } from '../observability/controller-metrics.js';
import { createApplySetApi, subjectOf } from '../kube/applyset-api.js';
import { checkDependencies } from '../reconcile/check-dependencies.js';
import { checkObjectDependencies } from '../reconcile/check-object-dependencies.js';
import { engineOutcome, runEngine, type EngineOutcome } from './engine-step.js';
import { checkedSpec, missingServiceAccount } from '../reconcile/account-step.js';
import { requestSettings, revisionRequest } from '../reconcile/revision-request.js';
import { createSteadyRuns, type SteadyRuns } from './steady-runs.js';
import { readSourceStep, type RevisionRun } from './source-step.js';
import { leavePreviousCluster } from './cluster-move-step.js';
import { finalize } from './finalize-applyset.js';
import { remoteEngineOutcome } from './remote-step.js';
import { recordRunMetrics } from './record-run-metrics.js';
import { reconcileContext, type ReconcileContext, type ReconcilerOptions } from './reconcile-context.js';
import type { QueueWorker } from './runtime/worker-pool.js';
import { createStatusWriter, mappingInputOf, type StatusWriter } from './status-writer.js';

/** Left of spec.timeout after a health wait, for its last poll's reads to finish before the abort. */
const WAIT_MARGIN_MS = 3_000;

/** One reconcile of the ApplySet `namespace/name`; the queue calls it and schedules the next. */
export type Reconciler = (key: string, worker?: QueueWorker) => Promise<Requeue>;

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const api = options.api ?? createApplySetApi(options.client);
  const fights = createFightTracker();
  const steadyRuns = createSteadyRuns();
  return async (key, worker) => {
    const ctx = reconcileContext(options, api, key, worker);
    const started = ctx.now();
    const { result, requeue } = await reconcile(ctx, options, { fights, steadyRuns });
    ctx.metrics.observeReconcile(result, (ctx.now() - started) / 1000, {
      namespace: ctx.namespace,
      name: ctx.name,
    });
    ctx.log.debug({ result, requeue }, 'reconcile finished');
    return requeue;
  };
}

interface Ended {
  readonly result: ReconcileResult;
  readonly requeue: Requeue;
}

/** What the reconciler remembers of each ApplySet between its runs. */
interface Memory {
  readonly fights: FightTracker;
  readonly steadyRuns: SteadyRuns;
}

async function reconcile(ctx: ReconcileContext, options: ReconcilerOptions, memory: Memory): Promise<Ended> {
  const { api, key, namespace, name, signal } = ctx;
  const { fights, steadyRuns } = memory;

  // 1. Read the ApplySet (the informer's copy when it is the version last answered to us:
  // informed-applyset-reads.ts); gone means nothing to do (its children were handled by the finalizer).
  const read = await api.get(namespace, name, signal);
  if (read === undefined) {
    fights.forget(key);
    steadyRuns.forget(key);
    ctx.metrics.setReady(namespace, name, undefined);
    return { result: 'deleted', requeue: { kind: 'none' } };
  }

  // 2. Deleted: prune every child (deletionPolicy Delete) or leave them (Orphan), then let it go.
  if (read.metadata.deletionTimestamp !== undefined) {
    const { engineFor, readerAs, remoteClusters, tenancy } = options;
    const deps = { ...ctx, engineFor, readerAs, remoteClusters, options };
    const view = applySetView(read, tenancy.defaultServiceAccountName);
    return { result: 'deleted', requeue: await finalize(deps, view) };
  }

  // 3. Hold the finalizer, so a deletion waits until the children are handled. An ApplySet that
  // records no children yet gets it with the engine's inventory widen, the write before any child
  // (parentOf); one that records some and lost it gets it back now, whatever this run does next.
  // From here the run works on the ApplySet as read (step 1), or as this PATCH left it: every later
  // write of it is conditional on its resourceVersion, and the engine takes it, not a new GET.
  const held = read.metadata.finalizers ?? [];
  const applySet =
    !held.includes(APPLYSET_FINALIZER) && recordsChildren(read)
      ? await api.setFinalizers(read, [...held, APPLYSET_FINALIZER], signal)
      : read;

  // The one view of the ApplySet this run works from: its spec parsed once, the account it acts as.
  const view = applySetView(applySet, options.tenancy.defaultServiceAccountName);

  // 4. Suspended: no fetch, no write, no status change, until the spec changes.
  if (view.lenient.suspend) {
    ctx.log.debug({}, 'suspended');
    return { result: 'suspended', requeue: { kind: 'none' } };
  }

  // 5-11: an outcome, never a throw. Every status write goes through the one writer.
  const status = createStatusWriter(ctx, applySet);
  const run = await applyRevision(ctx, options, view, status, steadyRuns);

  // 12. Report: fights (counted only on runs whose changes were drift), the status written once,
  // the events, the metrics, the next requeue.
  const fought =
    run.outcome.kind === 'applied' && run.steady === true
      ? fights.observe(key, run.outcome.corrections ?? [])
      : fights.current(key);
  const reported = await report(ctx, view, status, { ...run, fought });
  // A run in full is remembered when it changed nothing and reported nothing new (steady-runs.ts); a
  // run that ended before the engine, or lost its status write, drops what was remembered.
  if (reported === 'conflict' || (run.inputs === undefined && run.unchanged !== true)) {
    steadyRuns.forget(key);
  } else if (run.inputs !== undefined) {
    steadyRuns.settle(key, { ...run, ...run.inputs, steady: run.steady === true, quiet: reported.quiet });
  }
  if (reported === 'conflict') {
    return { result: 'retryable', requeue: { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS } };
  }
  const { requeue } = reported;
  return { result: run.outcome.kind === 'applied' ? 'success' : run.outcome.kind, requeue };
}

/** Steps 5 to 11, for an ApplySet that is neither gone, deleted nor suspended. */
async function applyRevision(
  ctx: ReconcileContext,
  options: ReconcilerOptions,
  view: ApplySetView,
  status: StatusWriter,
  steadyRuns: SteadyRuns,
): Promise<RevisionRun> {
  const { applySet: given, resolved } = view;
  const { namespace } = ctx;
  const { tenancy } = options;

  // 5. The spec as the CRD checks it: an invalid one stalls, naming every field.
  const checked = checkedSpec(resolved);
  if ('done' in checked) return { outcome: checked.done };
  const spec = checked.value;

  // 6. spec.dependsOn: nothing is fetched or applied until every ApplySet is Ready at its generation.
  const blocked = await checkDependencies(ctx.api, given, spec, {
    noCrossNamespaceRefs: tenancy.noCrossNamespaceRefs,
    signal: ctx.signal,
  });
  if (blocked !== undefined) return { outcome: blocked };

  // From here the run has spec.timeout; every concurrent request of the engine listens on this signal.
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(spec.timeoutMs)]);
  setMaxListeners(0, signal);
  const runDeadline = Date.now() + spec.timeoutMs;

  // 7. The account the set is applied as must exist before anything is fetched or written (one that
  // does not has no rights). Then the objects spec.dependsOn names, read as it: each Current, or wait.
  const { serviceAccount, user } = view.account;
  const missing = await missingServiceAccount(ctx, spec, serviceAccount, signal);
  if (missing !== undefined) return { outcome: missing };
  const account = { reader: options.readerAs(user), user, namespace };
  const awaited = await checkObjectDependencies(options.restMapper, account, spec, { ...tenancy, signal });
  if (awaited !== undefined) return { outcome: awaited };

  // 8. The source (readSourceStep), or the last run's outcome when nothing changed since.
  const source = await readSourceStep(ctx, options, { view, spec, account, signal }, steadyRuns);
  if ('outcome' in source) return source;
  const { target, files, revision, inputs } = source;

  // 9. spec.kubeConfig: the remote cluster, its kubeconfig read as that account too, and answering.
  const remote = await target.remote();
  if (remote !== undefined && 'done' in remote) return { outcome: remote.done };

  // 10. spec.kubeConfig changed: the objects leave the cluster they are on before any reach the new one.
  const moved = await leavePreviousCluster(
    { ...ctx, signal },
    {
      engineFor: options.engineFor,
      reader: account.reader,
      remoteClusters: options.remoteClusters,
      recordsChildren: recordsChildren(given),
    },
    { applySet: given, spec, user, target: remote?.value },
  );
  if ('done' in moved) return { outcome: moved.done };
  const applySet = moved.value;
  if (applySet !== given) status.moved(applySet.metadata.resourceVersion);

  // 11. Apply and prune, the ApplySet itself being the parent, as its ServiceAccount or the default
  // one. With spec.wait, each report of the objects still waited for is shown as Progressing.
  const built = revisionRequest(applySet, spec, files, { revision, ...requestSettings(options) }, signal);
  const { steady } = built;
  const request = withDeadlines(built.request, runDeadline - WAIT_MARGIN_MS, hookEvents(ctx, applySet));
  // A new revision: a forge marks its commit pending until the outcome is reported.
  if (!steady) ctx.notify?.applying(view, revision);
  const engine = runEngine((remote?.value.engineFor ?? options.engineFor)(user), request, status.version);
  for await (const wait of engine.waits) await status.progressing(wait, revision);
  const run = await engine.run;
  // The engine's writes of the ApplySet (as the controller) move it on even when the account was refused.
  if ('result' in run) status.moved(run.result.parentResourceVersion);
  const timedOut = signal.aborted;
  const ended = engineOutcome(run, { namespace, serviceAccount }, { revision, steady, timedOut }, ctx.log);
  return remote === undefined
    ? { ...ended, inputs: { ...inputs, applySet } }
    : remoteEngineOutcome(ended, remote.value.server, { namespace, serviceAccount });
}

/**
 * spec.timeout covers the whole run: the health wait, each hook and each sync wave end a moment before
 * the run's abort, so a set not healthy in time reads HealthCheckFailed, HookFailed or
 * SyncWaveNotHealthy naming its objects, not a bare Timeout.
 */
function withDeadlines(
  request: ApplySetRequest,
  deadline: number,
  events: Pick<HookRequest, 'onHook' | 'onSkipped'>,
): ApplySetRequest {
  const { wait, hooks, syncWaves } = request;
  return {
    ...request,
    ...(wait === undefined ? {} : { wait: { ...wait, deadline } }),
    ...(hooks === undefined ? {} : { hooks: { ...hooks, ...events, deadline } }),
    ...(syncWaves === undefined ? {} : { syncWaves: { ...syncWaves, deadline } }),
  };
}

type Fought = EngineOutcome & { readonly fought: Omit<FightVerdict, 'streaks'> };

/**
 * Step 12: the outcome as status (written once by the status writer), events, metrics and a log
 * line; the requeue, or 'conflict' when a newer writer changed the ApplySet meanwhile.
 */
async function report(
  ctx: ReconcileContext,
  view: ApplySetView,
  status: StatusWriter,
  run: Fought,
): Promise<{ readonly requeue: Requeue; readonly quiet: boolean } | 'conflict'> {
  const { applySet, resolved } = view;
  const { outcome } = run;
  const mapped = mapReconcileOutcome({
    outcome,
    ...mappingInputOf(view, ctx.now()),
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
  const written = await status.write(mapped.status);
  if (written === 'conflict') {
    ctx.log.debug({}, 'the ApplySet changed during the run; reading it again');
    return 'conflict';
  }
  for (const event of mapped.events) await ctx.recordEvent(subjectOf(applySet), event);
  // Sent in the background: a slow or dead receiver never holds the reconcile.
  ctx.notify?.reported(view, outcome, { fighting: run.fought.fighting, steady: run.steady === true });
  recordRunMetrics(ctx, applySet, mapped.status, run);
  const level = outcome.kind === 'applied' ? 'info' : 'warn';
  ctx.log[level](
    outcome.kind === 'applied'
      ? { revision: outcome.revision, counts: outcome.counts }
      : { reason: outcome.reason, revision: outcome.revision },
    outcome.kind === 'applied' ? 'reconciled' : `not reconciled: ${outcome.message}`,
  );
  return { requeue: mapped.requeue, quiet: written === 'unchanged' && mapped.events.length === 0 };
}
