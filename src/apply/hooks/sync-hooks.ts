/**
 * A run's hooks around its apply (docs/hooks.md): PreSync before anything is written, Sync once the
 * set is applied, PostSync once it is healthy, SyncFail when any of that fails. A hook that fails
 * ends the run with HookFailedError; SyncFail hooks run first when the apply had begun.
 */
import type { ManifestObject } from '../../manifests/manifest-object.js';
import type { ObjectRef } from '../../manifests/object-ref.js';
import type { ApplySetRequest, ApplySetResult } from '../apply-set-contract.js';
import type { StageReporter } from '../report-stage.js';
import type { RunContext } from '../run-context.js';
import { waitForHealth } from '../wait-for-health.js';
import { splitHooks, type Hook, type HookPhase, type HookRun } from './hook-annotations.js';
import { HookFailedError, runHookPhase } from './run-hooks.js';

export interface SyncHooks {
  /** The set's own objects: the files' objects without their hooks. */
  readonly objects: ManifestObject[];
  /** Every hook of the files, run or not (a dry run lists them, runs none). */
  readonly declared: readonly Hook[];
  /** PreSync: throws HookFailedError, before anything else is written, when a hook fails. */
  before(): Promise<void>;
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
  context: Pick<RunContext, 'api' | 'mapper'>,
  setId: string,
  reportStage: StageReporter,
): SyncHooks {
  const options = request.hooks;
  if (options === undefined) {
    return { objects: [...loaded], declared: [], before: async () => {}, after: async (result) => result };
  }
  const split = splitHooks(loaded);
  const active = options.run && !request.write.dryRun;
  if (active) for (const skipped of split.skipped) options.onSkipped?.(skipped);
  const hooks: Hook[] = active ? split.hooks : [];
  const runs: HookRun[] = [];
  const phase = async (name: HookPhase): Promise<boolean> => {
    const running = hooks.filter((hook) => hook.phases.includes(name));
    if (running.length === 0) return true;
    const refs = running.map((hook) => hook.object.ref);
    await reportStage({ stage: 'hook-phase', phase: name, hooks: refs });
    const ended = await runHookPhase(
      {
        phase: name,
        hooks,
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
  return {
    objects: split.objects,
    declared: split.hooks,
    before: async () => {
      if (!(await phase('PreSync'))) throw new HookFailedError(runs);
    },
    after: async (result, applied) => {
      if (hooks.length === 0) return result;
      const failedApply = result.outcomes.some((o) => o.action === 'failed' || o.action === 'conflict');
      if (failedApply || result.healthTimedOut === true || hasFailedHealth(result)) {
        await phase('SyncFail');
        return { ...result, hooks: runs };
      }
      if (!(await phase('Sync'))) return failWith();
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

function hasFailedHealth(result: ApplySetResult): boolean {
  return (result.health ?? []).some((report) => report.status !== 'Current');
}
