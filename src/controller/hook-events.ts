import type { HookRequest } from '../apply/apply-set-contract.js';
import { describeObjectRef } from '../manifests/object-ref.js';
import type { ApplySet } from '../api/applyset-types.js';
import { subjectOf } from '../kube/applyset-api.js';
import type { ReconcileContext } from './reconcile-context.js';

/**
 * What a run's hooks say as they end (docs/hooks.md): an event on the ApplySet for each hook run
 * (`HookSucceeded`, or a Warning `HookFailed` with why) and a Warning `HookSkipped` for each object
 * annotated as a hook this controller does not run, with a log line each. Events are sent in the
 * background: a slow API server does not hold the hooks.
 */
export function hookEvents(
  ctx: Pick<ReconcileContext, 'recordEvent' | 'log'>,
  applySet: ApplySet,
): Pick<HookRequest, 'onHook' | 'onSkipped'> {
  const record = (type: 'Normal' | 'Warning', reason: string, message: string) => {
    ctx.recordEvent(subjectOf(applySet), { type, reason, message }).catch((error: unknown) => {
      ctx.log.warn({ err: error, reason }, 'could not record a hook event');
    });
  };
  return {
    onHook: (run) => {
      const what = `${run.phase} hook ${describeObjectRef(run.hook.object.ref)}`;
      ctx.log[run.succeeded ? 'info' : 'warn']({ phase: run.phase, hook: what }, run.message);
      if (run.succeeded) record('Normal', 'HookSucceeded', `${what} finished`);
      else record('Warning', 'HookFailed', `${what} failed: ${run.message}`);
    },
    onSkipped: (skipped) => {
      const what = describeObjectRef(skipped.object.ref);
      ctx.log.warn({ hook: what }, `hook not run: ${skipped.reason}`);
      record('Warning', 'HookSkipped', `${what} is not applied nor run: ${skipped.reason}`);
    },
  };
}
