import { describeObjectRef, type ObjectRef } from '../manifests/object-ref.js';
import { computeApplySetId } from '../inventory/applyset-id.js';
import { syncHooks } from './hooks/sync-hooks.js';
import { loadPreDeleteHooks, runPreDeleteHooks } from './hooks/pre-delete-hooks.js';
import { stageReporter } from './report-stage.js';
import { PruneLimitExceededError } from './prune-limit-error.js';
import { waitForHealth } from './wait-for-health.js';
import { DEFAULT_TOOLING } from '../inventory/applyset-metadata.js';
import { createKubeObjectApi } from '../kube/kube-object-api.js';
import { createOpenApiPatchMetaSource } from '../kube/openapi-patch-meta-source.js';
import { createRestMapper } from '../kube/rest-mapper.js';
import type { ApplySetEngine, ApplySetRequest, ApplySetResult, PruneRequest } from './apply-set-contract.js';
import type { RunOrder } from './run-stage.js';
import type { Hook } from './hooks/hook-annotations.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { groupIntoSyncWaves, syncWaveOf } from '../manifests/sync-waves.js';
import { createParentWriter } from './parent-writer.js';
import { loadManifests, planRun, readLive, readParent } from './prepare-run.js';
import { releaseOwned } from './release-owned.js';
import { liveResourceVersion, type LiveState } from '../inventory/live-state.js';
import { createNoOpMemo } from './remember-no-op.js';
import { runPlan } from './run-plan.js';
import { refuseInvalidListItems } from './validate-list-items.js';
import type { ApplySetEngineOptions, RunContext } from './run-context.js';
import type { Plan } from '../plan/plan.js';

export type { ApplySetEngineOptions } from './run-context.js';

/**
 * The imperative shell around the pure core: load and validate the files, read the parent and the
 * live objects, `buildPlan`, then run the plan's steps in order (widen inventory, apply waves, wait
 * for CRDs, prune waves, narrow inventory, write the hash) and return what happened as data.
 */
export function createApplySetEngine(options: ApplySetEngineOptions): ApplySetEngine {
  const api = createKubeObjectApi(options.kubeClient);
  const parentApi =
    options.parentKubeClient === undefined ? api : createKubeObjectApi(options.parentKubeClient);
  const concurrency = options.concurrency ?? 16;
  const tooling = options.tooling ?? DEFAULT_TOOLING;
  // One mapper per engine unless one is given (the controller shares one between identities); each
  // run gets a view in which an unknown kind asks its group-version again at most once (a CRD
  // installed since).
  const mapper =
    options.restMapper ??
    createRestMapper(
      options.kubeClient,
      options.discoveryRecheckMs === undefined ? {} : { recheckAfterMs: options.discoveryRecheckMs },
    );
  const patchMeta =
    options.patchMetaSource ??
    createOpenApiPatchMetaSource({
      client: options.kubeClient,
      ...(options.openApiStore === undefined ? {} : { store: options.openApiStore }),
      onFetchError: (path, error) =>
        options.logger?.warn({ path, err: error }, 'OpenAPI not readable; using the built-in patch metadata'),
    });
  const serverNoOps = options.serverNoOps ?? createNoOpMemo();
  return (request) =>
    runApplySet(request, {
      kubeClient: options.kubeClient,
      logger: options.logger,
      afterStep: options.afterStep,
      crdEstablishedTimeoutMs: options.crdEstablishedTimeoutMs,
      forceDeleteTimeoutMs: options.forceDeleteTimeoutMs,
      api,
      parentApi,
      mapper: mapper.forRun(),
      concurrency,
      tooling,
      patchMeta,
      serverNoOps,
    });
}

async function runApplySet(request: ApplySetRequest, adapters: RunContext): Promise<ApplySetResult> {
  const { signal } = request;
  const context = request.healthOf === undefined ? adapters : { ...adapters, healthOf: request.healthOf };
  // 1. Decode and validate every file against discovery: all problems at once, nothing written.
  const loaded =
    request.release === true
      ? []
      : await loadManifests(request.input, context.mapper, signal, request.hooks !== undefined);
  request.input.screenObjects?.(loaded);
  await refuseInvalidListItems(loaded, request, context.patchMeta);
  const preDelete = request.release === true ? [] : await loadPreDeleteHooks(request, context);

  // 2. Read the apply-config object and the inventory it holds; the hooks leave the set's objects.
  const parent = await readParent(request, context);
  const writer = createParentWriter(parent, request, context);
  const setId = computeApplySetId(parent.kep);
  const hooks = syncHooks(loaded, request, context, setId, stageReporter(request, writer));
  const desired = hooks.objects;

  // 3. Read the live state of every object of the files and of the inventory.
  // Not before the parent exists (the CLI's first run): the plan must know first whether any object
  // is the set's to write, or it would create a parent for a set whose objects are all another's.
  const createUnread = !request.write.dryRun && request.release !== true && parent.live !== undefined;
  const live = await readLive(desired, parent, context, { signal, createUnread });

  // 4. deletionPolicy Orphan: let every owned object go, and nothing else.
  if (request.release === true) {
    const ownerUid = writer.ownerUid() ?? '';
    const { api, mapper, concurrency } = context;
    const outcomes = await releaseOwned(parent.inventory, live.live, {
      api,
      mapper,
      concurrency,
      signal,
      ownerUid,
    });
    return { outcomes, parentUid: ownerUid, completed: true };
  }

  // 5. Plan the whole run as data.
  const plan = planRun(desired, parent, live, request, writer.ownerUid());
  // A real run over spec.pruneLimit stops here, before its first write; a dry run reports it.
  const overLimit = overPruneLimit(plan, request.prune, parent.inventory.length);
  if (overLimit !== undefined && !request.write.dryRun) throw overLimit;

  // 6. PreSync hooks (PreDelete, for a deleted set), then run it: widen the inventory, apply, wait
  // for CRDs, prune, narrow the inventory, write the hash.
  await hooks.before();
  await runPreDeleteHooks(preDelete, request, context, setId);
  const ran = await runPlan(plan, parent, writer, request, context, hooks.duringWaves).catch(hooks.stopped);
  const order = request.write.dryRun ? runOrder(desired, hooks.declared, request) : undefined;
  const result = {
    ...ran,
    liveVersions: liveVersionsOf(live.live),
    ...(overLimit === undefined ? {} : { pruneLimitExceeded: overLimit }),
    ...(order === undefined ? {} : { order }),
  };
  const applied = result.outcomes
    .filter((o) => o.action === 'created' || o.action === 'configured' || o.action === 'unchanged')
    .map((o) => o.ref);

  // 7. With --wait / spec.wait, once everything was applied: wait for it to be healthy. Then the
  // Sync and PostSync hooks, or SyncFail.
  const ended = await hooks.after(await waitIfAsked(result, applied, request, context), applied);
  return request.hooks === undefined ? ended : { ...ended, preDeleteHooks: hooks.preDeleteHooks };
}

/** The resourceVersion of every object read present, by its key. */
function liveVersionsOf(live: ReadonlyMap<string, LiveState>): ReadonlyMap<string, string> {
  const versions = new Map<string, string>();
  for (const [key, state] of live) {
    const version = state.status === 'present' ? liveResourceVersion(state.object) : undefined;
    if (version !== undefined) versions.set(key, version);
  }
  return versions;
}

async function waitIfAsked(
  result: ApplySetResult,
  applied: readonly ObjectRef[],
  request: ApplySetRequest,
  context: RunContext,
): Promise<ApplySetResult> {
  const { wait, signal } = request;
  if (wait === undefined || request.write.dryRun || !result.completed) return result;
  if (result.outcomes.some((o) => o.action === 'failed' || o.action === 'conflict')) return result;
  const { onHealthWait } = wait;
  const { health, timedOut } = await waitForHealth(
    [...applied, ...(wait.healthChecks ?? [])],
    context,
    signal,
    {
      timeoutMs: wait.timeoutMs,
      ...(wait.deadline === undefined ? {} : { deadline: wait.deadline }),
      ...(wait.pollMs === undefined ? {} : { pollMs: wait.pollMs }),
      ...(wait.onReady === undefined ? {} : { onReady: wait.onReady }),
      ...(onHealthWait === undefined
        ? {}
        : {
            onPending: (pending) =>
              onHealthWait({ pending, parentResourceVersion: result.parentResourceVersion }),
          }),
    },
  );
  return { ...result, health, healthTimedOut: timedOut };
}

/**
 * The plan's deletions judged against spec.pruneLimit (a percentage is of the objects the set held):
 * the error a run over the limit stops with; undefined within it, or without a limit.
 */
function overPruneLimit(plan: Plan, prune: PruneRequest, held: number): PruneLimitExceededError | undefined {
  if (prune.mode !== 'delete' || prune.limit === undefined) return undefined;
  const limit = 'count' in prune.limit ? prune.limit.count : Math.floor((held * prune.limit.percent) / 100);
  const deletions = plan.steps.flatMap((step) =>
    step.type === 'prune-wave' ? step.actions.filter((action) => action.type === 'delete') : [],
  );
  if (deletions.length <= limit) return undefined;
  return new PruneLimitExceededError(
    limit,
    deletions.map((action) => describeObjectRef(action.ref)),
  );
}

/** The sync waves (with `syncWaves`, when more than one) and the hooks of a dry run; none: undefined. */
function runOrder(
  desired: readonly ManifestObject[],
  hooks: readonly Hook[],
  request: ApplySetRequest,
): RunOrder | undefined {
  const waves =
    request.syncWaves === undefined ? [] : groupIntoSyncWaves(desired, (o) => syncWaveOf(o.manifest));
  const syncWaves =
    waves.length > 1 ? waves.map(({ wave, items }) => ({ wave, refs: items.map((o) => o.ref) })) : [];
  if (syncWaves.length === 0 && hooks.length === 0) return undefined;
  return { syncWaves, hooks };
}
