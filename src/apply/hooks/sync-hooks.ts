/**
 * A run's hooks around its apply (docs/hooks.md): PreSync before anything is written, Sync with their
 * sync wave (or once the set is applied), PostSync once it is healthy, SyncFail when any of that
 * fails. A hook that fails ends the run with HookFailedError; SyncFail hooks run first when the apply
 * had begun.
 */
import type { ManifestObject } from '../../manifests/manifest-object.js';
import { syncWaveOf } from '../../manifests/sync-waves.js';
import type { ObjectRef } from '../../manifests/object-ref.js';
import type { ApplySetRequest, ApplySetResult } from '../apply-set-contract.js';
import type { StageReporter } from '../report-stage.js';
import type { RunContext } from '../run-context.js';
import { waitForHealth } from '../wait-for-health.js';
import { splitHooks, type Hook, type HookPhase, type HookRun } from './hook-annotations.js';
import { SyncWaveNotHealthyError } from '../sync-wave-error.js';
import { HookFailedError, runHookPhase } from './run-hooks.js';

export interface SyncHooks {
  /** The set's own objects: the files' objects without their hooks. */
  readonly objects: ManifestObject[];
  /** How many PreDelete hooks the files hold: run only when the set is deleted, never in a sync. */
  readonly preDeleteHooks: number;
  /** Every hook of the files, run or not (a dry run lists them, runs none). */
  readonly declared: readonly Hook[];
  /**
   * PreSync, then the Sync hooks of the waves before the first wave of objects: throws
   * HookFailedError, before anything else is written, when a hook fails.
   */
  before(): Promise<void>;
  /** The Sync hooks of weights from `from` up to `to` (excluded), between two waves of objects. */
  duringWaves(from: number, to: number): Promise<void>;
  /**
   * The run stopped between two waves (a wave not healthy, a Sync hook failed): SyncFail hooks run,
   * and the error is thrown again (HookFailedError with every hook's end, for a hook).
   */
  stopped(error: unknown): Promise<never>;
  /**
   * Sync, then PostSync once `applied` are healthy (waited for here when the request does not wait),
   * or SyncFail when the apply, the health wait or a hook failed. Throws HookFailedError for a
   * failed hook; returns the result with every hook's end.
   */
  after(result: ApplySetResult, applied: readonly ObjectRef[]): Promise<ApplySetResult>;
}

/** The hooks of a run's objects; none (and nothing split out) when the request names no hooks. */
export function syncHooks(
  loaded: readonly ManifestObject[],
  request: ApplySetRequest,
  context: Pick<RunContext, 'api' | 'mapper' | 'healthOf'>,
  setId: string,
  reportStage: StageReporter,
): SyncHooks {
  const options = request.hooks;
  if (options === undefined) return withoutHooks(loaded);
  const split = splitHooks(loaded);
  const active = options.run && !request.write.dryRun;
  if (active) for (const skipped of split.skipped) options.onSkipped?.(skipped);
  // A hook only of PreDelete waits for the set's deletion: a sync neither runs nor reports it.
  const hooks: Hook[] = active ? split.hooks.filter((hook) => hook.phases.some(isSyncPhase)) : [];
  const runs: HookRun[] = [];
  // Sync hooks not run yet: with sync waves on, each runs with its wave (`duringWaves`).
  let syncPending = hooks.filter((hook) => hook.phases.includes('Sync'));
  const phase = async (name: HookPhase, only: readonly Hook[] = hooks): Promise<boolean> => {
    const running = only.filter((hook) => hook.phases.includes(name));
    if (running.length === 0) return true;
    if (name === 'Sync') syncPending = syncPending.filter((hook) => !only.includes(hook));
    await reportStage({ stage: 'hook-phase', phase: name, hooks: running.map((hook) => hook.object.ref) });
    const ended = await runHookPhase(
      {
        phase: name,
        hooks: only,
        setId,
        timeoutMs: options.timeoutMs,
        ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
        ...(options.onHook === undefined ? {} : { onHook: options.onHook }),
      },
      context,
    );
    runs.push(...ended);
    return ended.every((run) => run.succeeded);
  };
  const failWith = async (): Promise<never> => {
    await phase('SyncFail');
    throw new HookFailedError(runs);
  };
  const syncBetween = (from: number, to: number) => phase('Sync', weighing(syncPending, from, to));
  const firstWave = firstSyncWave(request, split.objects);
  return {
    objects: split.objects,
    preDeleteHooks: split.hooks.filter((hook) => hook.phases.includes('PreDelete')).length,
    declared: split.hooks,
    before: async () => {
      if (!(await phase('PreSync'))) throw new HookFailedError(runs);
      if (firstWave !== undefined && !(await syncBetween(-Infinity, firstWave))) await failWith();
    },
    duringWaves: async (from, to) => {
      if (!(await syncBetween(from, to))) throw new HookFailedError(runs);
    },
    stopped: async (error) => {
      if (!(error instanceof SyncWaveNotHealthyError || error instanceof HookFailedError)) throw error;
      await phase('SyncFail');
      throw error instanceof HookFailedError ? new HookFailedError(runs) : error;
    },
    after: async (result, applied) => {
      if (hooks.length === 0) return result;
      const failedApply = result.outcomes.some((o) => o.action === 'failed' || o.action === 'conflict');
      if (failedApply || result.healthTimedOut === true || hasFailedHealth(result)) {
        await phase('SyncFail');
        return { ...result, hooks: runs };
      }
      if (!(await phase('Sync', syncPending))) return failWith();
      if (hooks.some((hook) => hook.phases.includes('PostSync')) && result.health === undefined) {
        // PostSync waits for the set to be healthy even when the request does not wait.
        const { health, timedOut } = await waitForHealth(applied, context, request.signal, {
          timeoutMs: options.timeoutMs,
          ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
        });
        if (timedOut || health.some((report) => report.status !== 'Current')) {
          await phase('SyncFail');
          return { ...result, health, healthTimedOut: timedOut, hooks: runs };
        }
      }
      if (!(await phase('PostSync'))) return failWith();
      return { ...result, hooks: runs };
    },
  };
}

/** A run without hooks (the CLI, as kubectl): every object is the set's. */
function withoutHooks(loaded: readonly ManifestObject[]): SyncHooks {
  return {
    objects: [...loaded],
    preDeleteHooks: 0,
    declared: [],
    before: async () => {},
    duringWaves: async () => {},
    stopped: (error) => Promise.reject(error),
    after: async (result) => result,
  };
}

/** The first sync wave of the set's objects (the Sync hooks of lower weights run before it). */
function firstSyncWave(request: ApplySetRequest, objects: readonly ManifestObject[]): number | undefined {
  if (request.syncWaves === undefined || objects.length === 0) return undefined;
  return Math.min(...objects.map((object) => syncWaveOf(object.manifest)));
}

/** The hooks of weights from `from` up to `to` (excluded). */
function weighing(hooks: readonly Hook[], from: number, to: number): Hook[] {
  return hooks.filter((hook) => hook.weight >= from && hook.weight < to);
}

function isSyncPhase(phase: HookPhase): boolean {
  return phase !== 'PreDelete';
}

function hasFailedHealth(result: ApplySetResult): boolean {
  return (result.health ?? []).some((report) => report.status !== 'Current');
}
