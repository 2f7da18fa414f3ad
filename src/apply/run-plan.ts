import PQueue from 'p-queue';
import { computeApplyHash } from '../inventory/apply-hash.js';
import { applySetMemberMetadata } from '../inventory/applyset-metadata.js';
import type { Inventory } from '../inventory/inventory.js';
import { liveResourceVersion } from '../inventory/live-state.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { describeObjectRef, objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import { narrowedInventory } from '../plan/narrowed-inventory.js';
import type { Plan, PlanStep } from '../plan/plan.js';
import type { ApplySetRequest, ApplySetResult, ObjectOutcome } from './apply-set-contract.js';
import { applyAction } from './apply-object.js';
import { createSetParentFinder, setParentKinds } from './find-set-parent.js';
import { plannedDeletions } from './guard-holder-prune.js';
import { neverWritten } from './never-written.js';
import type { ParentWriter } from './parent-writer.js';
import type { ParentState } from './prepare-run.js';
import { pruneAction, type PruneContext } from './prune-object.js';
import type { ObjectContext, RunContext } from './run-context.js';
import { waitForCrds } from './wait-for-crds.js';
import { stageReporter, type StageReporter } from './report-stage.js';
import { waitForHealth } from './wait-for-health.js';
import { inSpan } from '../observability/trace-span.js';
import { DEFAULT_SYNC_WAVE_TIMEOUT_MS, SyncWaveNotHealthyError } from './sync-wave-error.js';

/** What the steps of one run have done so far, and what they share. */
interface PlanRun {
  readonly request: ApplySetRequest;
  readonly context: RunContext;
  readonly writer: ParentWriter;
  readonly reportStage: StageReporter;
  readonly queue: PQueue;
  readonly objectContext: () => ObjectContext;
  readonly report: (field: 'applied' | 'pruned') => <T>(outcome: T) => T;
  readonly inventoryOldKeys: ReadonlySet<string>;
  readonly pruning: ReturnType<typeof plannedDeletions>;
  readonly outcomes: ObjectOutcome[];
  readonly confirmedDeleted: ObjectRef[];
  /** Objects this run added to the inventory but that were certainly never written (neverWritten). */
  readonly unwritten: ObjectRef[];
  /** Namespaces and CRDs kept because they hold objects of others: they leave the inventory too. */
  readonly released: ObjectRef[];
  applyFailed: boolean;
  finalInventory: Inventory | undefined;
  readonly waveHooks: SyncWaveHooks | undefined;
}

/**
 * Runs the Sync hooks whose weight is at least `from` and below `to` (docs/hooks.md#waves); throws
 * HookFailedError when one fails.
 */
export type SyncWaveHooks = (from: number, to: number) => Promise<void>;

/**
 * Runs the plan's steps in order (widen inventory, apply waves, wait for CRDs, prune waves, narrow
 * inventory, write the hash) and returns what happened to each object as data.
 */
export async function runPlan(
  plan: Plan,
  parent: ParentState,
  writer: ParentWriter,
  request: ApplySetRequest,
  context: RunContext,
  waveHooks?: SyncWaveHooks,
): Promise<ApplySetResult> {
  const { signal } = request;
  const findSetParent = createSetParentFinder(
    context.kubeClient,
    setParentKinds(request.input.parent),
    signal,
  );
  const run: PlanRun = {
    request,
    context,
    writer,
    reportStage: stageReporter(request, writer),
    queue: new PQueue({ concurrency: context.concurrency }),
    objectContext: () => {
      const ownerUid = writer.ownerUid() ?? '';
      return {
        write: request.write,
        signal,
        ownerUid,
        member: applySetMemberMetadata({ ownerUid, parent: parent.kep }),
        findSetParent,
        api: context.api,
        mapper: context.mapper,
        patchMeta: context.patchMeta,
        serverNoOps: context.serverNoOps,
        forceDeleteTimeoutMs: context.forceDeleteTimeoutMs,
      };
    },
    report: progressReporter(plan.steps, request),
    inventoryOldKeys: new Set(parent.inventory.map(objectRefKey)),
    pruning: plannedDeletions(plan.steps),
    outcomes: [],
    confirmedDeleted: [],
    unwritten: [],
    released: [],
    applyFailed: false,
    finalInventory: undefined,
    waveHooks,
  };
  for (const [index, step] of plan.steps.entries()) {
    signal?.throwIfAborted();
    context.logger?.debug({ step: step.type, index }, 'applyset step');
    await runStep(step, run);
    await context.afterStep?.(step, index);
  }
  const live = writer.live();
  return {
    outcomes: run.outcomes,
    parentUid: writer.ownerUid() ?? '',
    ...(live === undefined ? {} : { parentResourceVersion: liveResourceVersion(live) ?? '' }),
    inventory: writer.inventory(),
    completed: !request.write.dryRun,
  };
}

async function runStep(step: PlanStep, run: PlanRun): Promise<void> {
  const { dryRun } = run.request.write;
  switch (step.type) {
    case 'widen-inventory':
      if (!dryRun) await run.writer.writeInventory(step.inventory);
      return;
    case 'apply-wave':
      return applyWave(step, run);
    case 'wait-for-crds':
      if (!dryRun) await waitForCrds(appliedCrds(step.crds, run.outcomes), run.context, run.request.signal);
      return;
    case 'wait-for-sync-wave':
      if (!dryRun) await syncWaveDone(step, run);
      return;
    case 'prune-wave':
      return pruneWave(step, run);
    case 'narrow-inventory':
      run.finalInventory = narrowedInventory(step, run.confirmedDeleted, run.released, run.unwritten);
      if (!dryRun) await run.writer.writeInventory(run.finalInventory);
      return;
    case 'write-hash':
      if (!dryRun && run.finalInventory !== undefined && run.writer.live() !== undefined) {
        await run.writer.write({
          labels: { [MetadataKeys.applyHash]: computeApplyHash(run.finalInventory) },
          annotations: {},
        });
      }
      return;
  }
}

async function applyWave(step: Extract<PlanStep, { type: 'apply-wave' }>, run: PlanRun): Promise<void> {
  const objects = run.objectContext();
  const { signal } = run.request;
  const wave = { 'apply.wave': step.wave, 'apply.objects': step.actions.length };
  const results = await inSpan('apply.wave', wave, () =>
    run.queue.addAll(
      step.actions.map(
        (action) => () =>
          inObjectSpan('apply.object', action, () => applyAction(action, objects)).then(
            run.report('applied'),
          ),
      ),
      signal === undefined ? {} : { signal },
    ),
  );
  for (const [position, outcome] of results.entries()) {
    if (outcome === undefined) continue;
    if (outcome.action === 'failed') run.applyFailed = true;
    const action = step.actions[position];
    if (action !== undefined && neverWritten(action, outcome, run.inventoryOldKeys))
      run.unwritten.push(outcome.ref);
    run.outcomes.push(outcome);
  }
}

async function pruneWave(step: Extract<PlanStep, { type: 'prune-wave' }>, run: PlanRun): Promise<void> {
  const { signal } = run.request;
  const { api, mapper, kubeClient, concurrency } = run.context;
  const prune: PruneContext = {
    api,
    mapper,
    kubeClient,
    concurrency,
    dryRun: run.request.write.dryRun,
    signal,
    applyFailed: run.applyFailed,
    ownerUid: run.writer.ownerUid() ?? '',
    pruning: run.pruning,
  };
  const wave = { 'apply.wave': step.wave, 'apply.objects': step.actions.length };
  const results = await inSpan('prune.wave', wave, () =>
    run.queue.addAll(
      step.actions.map(
        (action) => () =>
          inObjectSpan('prune.object', action, () => pruneAction(action, prune)).then(run.report('pruned')),
      ),
      signal === undefined ? {} : { signal },
    ),
  );
  for (const result of results) {
    if (result === undefined) continue;
    if (result.action === 'pruned') run.confirmedDeleted.push(result.ref);
    if (result.action === 'prune-skipped' && result.released === true) run.released.push(result.ref);
    run.outcomes.push(result);
  }
}

/**
 * A sync wave's objects healthy and its Sync hooks finished, created as the wave was applied and
 * awaited together (as Argo CD does), then the hooks of the waves no object is in, up to the next.
 */
async function syncWaveDone(
  step: Extract<PlanStep, { type: 'wait-for-sync-wave' }>,
  run: PlanRun,
): Promise<void> {
  const [objects, hooks] = await Promise.allSettled([
    awaitSyncWave(step, run),
    run.waveHooks?.(step.wave, step.wave + 1),
  ]);
  if (objects.status === 'rejected') throw objects.reason;
  if (hooks.status === 'rejected') throw hooks.reason;
  await run.waveHooks?.(step.wave + 1, step.next);
}

/**
 * The objects of a sync wave are healthy, or the run stops before the next wave (nothing of it written,
 * nothing pruned; the inventory stays widened, as after a crash, and the next run goes on from there).
 */
async function awaitSyncWave(
  step: Extract<PlanStep, { type: 'wait-for-sync-wave' }>,
  run: PlanRun,
): Promise<void> {
  if (run.applyFailed) {
    throw new SyncWaveNotHealthyError(step.wave, 'an object of it could not be applied (see the errors)');
  }
  const refs = step.refs.filter((ref) =>
    run.outcomes.some((o) => objectRefKey(o.ref) === objectRefKey(ref) && o.action !== 'conflict'),
  );
  const timeoutMs = run.request.syncWaves?.timeoutMs ?? DEFAULT_SYNC_WAVE_TIMEOUT_MS;
  const deadline = run.request.syncWaves?.deadline;
  const place = { wave: step.wave, position: step.position, waves: step.waves, next: step.next };
  let told = false;
  const { health, timedOut } = await waitForHealth(refs, run.context, run.request.signal, {
    timeoutMs,
    ...(deadline === undefined ? {} : { deadline }),
    // Said once, at the wave's first poll that leaves objects not healthy: never per poll.
    onPending: async (pending) => {
      if (told) return;
      told = true;
      await run.reportStage({ stage: 'sync-wave-waiting', pending, ...place });
    },
  });
  const unhealthy = health.filter((report) => report.status !== 'Current');
  if (unhealthy.length === 0) {
    await run.reportStage({ stage: 'sync-wave-healthy', objects: refs.length, ...place });
    return;
  }
  const named = unhealthy
    .slice(0, 5)
    .map(
      (report) =>
        `${describeObjectRef(report.ref)} is ${report.status}${report.message === '' ? '' : `: ${report.message}`}`,
    )
    .join('; ');
  const more = unhealthy.length > 5 ? ` and ${unhealthy.length - 5} more` : '';
  throw new SyncWaveNotHealthyError(
    step.wave,
    `${timedOut ? `not healthy within spec.timeout (${timeoutMs / 1000} s)` : 'an object of it failed'}: ${named}${more}`,
  );
}

/** The CRDs of the step that this run applied (not failed, not in conflict): only these are awaited. */
function appliedCrds(crds: readonly ObjectRef[], outcomes: readonly ObjectOutcome[]): ObjectRef[] {
  return crds.filter((ref) =>
    outcomes.some(
      (o) => objectRefKey(o.ref) === objectRefKey(ref) && o.action !== 'failed' && o.action !== 'conflict',
    ),
  );
}

/** Counts each object applied and each prune candidate handled, and tells the request's listener. */
function progressReporter(
  steps: readonly PlanStep[],
  request: ApplySetRequest,
): (field: 'applied' | 'pruned') => <T>(outcome: T) => T {
  const progress = { applied: 0, toApply: 0, pruned: 0, toPrune: 0 };
  for (const step of steps) {
    if (step.type === 'apply-wave') progress.toApply += step.actions.length;
    if (step.type === 'prune-wave') progress.toPrune += step.actions.length;
  }
  return (field) =>
    <T>(outcome: T): T => {
      progress[field] += 1;
      request.onProgress?.({ ...progress });
      return outcome;
    };
}

/** One object's apply or prune as a span (within a traced reconcile), with what became of it. */
function inObjectSpan<T extends { readonly action: string } | undefined>(
  name: string,
  { type, ref }: { readonly type: string; readonly ref: ObjectRef },
  work: () => Promise<T>,
): Promise<T> {
  const object = {
    'k8s.object.group': ref.group,
    'k8s.object.kind': ref.kind,
    'k8s.namespace.name': ref.namespace,
    'k8s.object.name': ref.name,
    'apply.action': type,
  };
  return inSpan(name, object, async (notes) => {
    const outcome = await work();
    if (outcome !== undefined) notes.set({ 'apply.result': outcome.action });
    return outcome;
  });
}
