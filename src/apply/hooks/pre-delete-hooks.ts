/**
 * The PreDelete hooks of a deleted set (docs/hooks.md): read from the files of the revision it last
 * applied, validated with the run's other input before anything is written, and run, weight by
 * weight as every phase, before its first prune. Argo CD's order: a PreDelete hook that fails keeps
 * every object of the set, and the deletion is retried.
 */
import type { ManifestObject } from '../../manifests/manifest-object.js';
import type { ApplySetRequest } from '../apply-set-contract.js';
import { loadManifests } from '../prepare-run.js';
import type { RunContext } from '../run-context.js';
import { splitHooks, type Hook } from './hook-annotations.js';
import { HookFailedError, runHookPhase } from './run-hooks.js';

/** The PreDelete hooks of the request's preDelete files (none without them), validated as any input. */
export async function loadPreDeleteHooks(
  request: Pick<ApplySetRequest, 'input' | 'preDelete' | 'signal'>,
  context: Pick<RunContext, 'mapper'>,
): Promise<Hook[]> {
  const { preDelete } = request;
  if (preDelete === undefined || preDelete.files.length === 0) return [];
  const loaded: ManifestObject[] = await loadManifests(
    { ...request.input, files: preDelete.files },
    context.mapper,
    request.signal,
  );
  request.input.screenObjects?.(loaded);
  return splitHooks(loaded).hooks.filter((hook) => hook.phases.includes('PreDelete'));
}

/** Runs them; throws HookFailedError, before anything is deleted, when one fails. */
export async function runPreDeleteHooks(
  hooks: readonly Hook[],
  request: Pick<ApplySetRequest, 'preDelete' | 'signal'>,
  context: Pick<RunContext, 'api' | 'mapper'>,
  setId: string,
): Promise<void> {
  const { preDelete, signal } = request;
  if (preDelete === undefined || hooks.length === 0) return;
  const runs = await runHookPhase(
    {
      phase: 'PreDelete',
      hooks,
      setId,
      timeoutMs: preDelete.timeoutMs,
      ...(preDelete.deadline === undefined ? {} : { deadline: preDelete.deadline }),
      ...(signal === undefined ? {} : { signal }),
      ...(preDelete.onHook === undefined ? {} : { onHook: preDelete.onHook }),
    },
    context,
  );
  if (runs.some((run) => !run.succeeded)) throw new HookFailedError(runs);
}
