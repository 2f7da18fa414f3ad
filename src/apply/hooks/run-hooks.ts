/**
 * Runs one phase of a set's hooks (docs/hooks.md): weight by weight, each hook's earlier object of
 * the same name deleted, the hook created, and all of the weight waited for until finished (kstatus:
 * a Job Complete, a Pod Succeeded, any other kind Current) or failed, within the run's deadline; then
 * deleted by its policy. The first weight with a failure ends the phase.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { IntentError } from '../../errors/intent-error.js';
import { messageOf } from '../../errors/message-of.js';
import { rethrowAbort } from '../../errors/rethrow-abort.js';
import type { JsonObject } from '../../manifests/json-value.js';
import { KubeApiError } from '../../kube/kube-api-error.js';
import type { ResourceLocation } from '../../kube/kube-object-api.js';
import { describeObjectRef } from '../../manifests/object-ref.js';
import { gvkOf, locationIn } from '../object-location.js';
import type { RunContext } from '../run-context.js';
import { waitForHealth } from '../wait-for-health.js';
import type { Hook, HookPhase, HookRun } from './hook-annotations.js';
import { manifestAnnotations } from '../../manifests/manifest-annotations.js';

/** Marks an object as a hook of one set: only such an object is deleted before its hook is created again. */
const HOOK_OF_ANNOTATION = 'applyset.dev/hook-of';

export interface HookPhaseRequest {
  readonly phase: HookPhase;
  readonly hooks: readonly Hook[];
  /** The set's parent id: written on each hook, and required of an object a hook replaces. */
  readonly setId: string;
  /** The run's time limit (spec.timeout) and its end, whichever comes first. */
  readonly timeoutMs: number;
  readonly deadline?: number;
  readonly signal?: AbortSignal;
  readonly onHook?: (run: HookRun) => void;
}

/** A hook that failed, timed out or could not be created: the run stops, saying which and why. */
export class HookFailedError extends IntentError {
  override readonly name = 'HookFailedError';
  readonly code = 'HOOK_FAILED';
  readonly reason = 'HookFailed';
  readonly intent = 'retryable';
  constructor(readonly runs: readonly HookRun[]) {
    const failed = runs.filter((run) => !run.succeeded);
    super(
      failed
        .map((run) => `${run.phase} hook ${describeObjectRef(run.hook.object.ref)} failed: ${run.message}`)
        .join('; '),
    );
  }
}

/** Runs the phase's hooks; returns every hook's end, the failed ones last. */
export async function runHookPhase(
  request: HookPhaseRequest,
  context: Pick<RunContext, 'api' | 'mapper' | 'healthOf'>,
): Promise<HookRun[]> {
  const deadline = Math.min(Date.now() + request.timeoutMs, request.deadline ?? Infinity);
  const hooks = request.hooks.filter((hook) => hook.phases.includes(request.phase));
  const runs: HookRun[] = [];
  for (const weight of [...new Set(hooks.map((hook) => hook.weight))]) {
    const group = hooks.filter((hook) => hook.weight === weight);
    const ended = await Promise.all(group.map((hook) => runHook(hook, request, context, deadline)));
    for (const run of ended) request.onHook?.(run);
    runs.push(...ended);
    if (ended.some((run) => !run.succeeded)) break;
  }
  return runs;
}

async function runHook(
  hook: Hook,
  request: HookPhaseRequest,
  context: Pick<RunContext, 'api' | 'mapper' | 'healthOf'>,
  deadline: number,
): Promise<HookRun> {
  const { signal, phase } = request;
  let ref = hook.object.ref;
  // A generateName hook is reported by the name the API server gave it, once it has one.
  const end = (succeeded: boolean, message: string): HookRun => ({
    phase,
    hook: ref === hook.object.ref ? hook : { ...hook, object: { ...hook.object, ref } },
    succeeded,
    message,
  });
  let location: ResourceLocation;
  try {
    location = locationIn(await context.mapper.resolve(gvkOf(hook.object), signal), ref.namespace);
    // A generateName hook is a new object each run (as in Argo CD): there is no earlier one to replace.
    if (hook.object.generateName !== true) {
      const replaced = await replaceEarlier(location, ref.name, request, context, deadline);
      if (replaced !== undefined) return end(false, replaced);
    }
    const created = await context.api.create(location, marked(hook.object.manifest, request.setId), signal);
    const name = (created['metadata'] as JsonObject | undefined)?.['name'];
    if (typeof name === 'string' && name !== ref.name) ref = { ...ref, name };
  } catch (error) {
    rethrowAbort(error);
    return end(false, `could not be created: ${messageOf(error)}`);
  }
  const { health, timedOut } = await waitForHealth([ref], context, signal, {
    timeoutMs: Math.max(0, deadline - Date.now()),
  });
  const last = health[0];
  const succeeded = last?.status === 'Current';
  const message = succeeded
    ? 'finished'
    : timedOut
      ? `did not finish within spec.timeout (${last?.status ?? 'Unknown'}: ${last?.message ?? ''})`
      : `${last?.status ?? 'Unknown'}: ${last?.message ?? ''}`;
  const policy = succeeded ? 'HookSucceeded' : 'HookFailed';
  if (hook.deletePolicies.includes(policy)) {
    await context.api.delete(location, ref.name, { propagationPolicy: 'Background' }, signal).catch(() => {
      // Left for the next run's replacement to delete: a hook's end is what the user needs to read.
    });
  }
  return end(succeeded, message);
}

/**
 * Deletes the object an earlier run of this hook left (Helm's and Argo CD's BeforeHookCreation, always
 * on here) and waits until it is gone; an object of that name that is not this set's hook is left
 * alone and the hook fails, naming it.
 */
async function replaceEarlier(
  location: ResourceLocation,
  name: string,
  request: HookPhaseRequest,
  context: Pick<RunContext, 'api'>,
  deadline: number,
): Promise<string | undefined> {
  const { signal } = request;
  const earlier = await context.api.get(location, name, signal);
  if (earlier === undefined) return undefined;
  if (manifestAnnotations(earlier)[HOOK_OF_ANNOTATION] !== request.setId) {
    return `an object of that name exists and is not a hook of this set (no ${HOOK_OF_ANNOTATION} of it); it was left as it is`;
  }
  try {
    await context.api.delete(location, name, { propagationPolicy: 'Background' }, signal);
  } catch (error) {
    if (!(error instanceof KubeApiError && error.notFound)) throw error;
  }
  while ((await context.api.get(location, name, signal)) !== undefined) {
    if (Date.now() >= deadline) return 'its earlier object was still being deleted at spec.timeout';
    await delay(250, undefined, signal === undefined ? {} : { signal });
  }
  return undefined;
}

/** The hook's manifest with the mark of the set it belongs to. */
function marked(manifest: JsonObject, setId: string): JsonObject {
  const metadata = (manifest['metadata'] ?? {}) as JsonObject;
  const annotations = (metadata['annotations'] ?? {}) as JsonObject;
  return {
    ...manifest,
    metadata: { ...metadata, annotations: { ...annotations, [HOOK_OF_ANNOTATION]: setId } },
  };
}
