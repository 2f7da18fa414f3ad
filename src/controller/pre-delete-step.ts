/**
 * The finalizer's PreDelete hooks (docs/hooks.md): before a deleted ApplySet's objects are pruned, the
 * revision it last applied is read again through the reconcile's own source path (its credentials
 * read as its account, the commit or digest the status recorded, the kustomization built, the chart
 * rendered), and its PreDelete hooks run. As in Argo CD, nothing of the set is deleted until they
 * succeed: a revision that cannot be read, or a hook that fails, keeps every object and the
 * finalizer, says why in the status, and the deletion is retried with back-off.
 */
import type { PreDeleteRequest } from '../apply/apply-set-contract.js';
import { HookFailedError } from '../apply/hooks/run-hooks.js';
import { SKIP_PRE_DELETE_HOOKS_ANNOTATION } from '../api/applyset-types.js';
import type { ApplySetView } from '../api/applyset-view.js';
import type { ReconcileOutcome, Step } from '../api/reconcile-outcome.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../kustomize/run-kustomize.js';
import { pinRevision } from '../source/pin-revision.js';
import { readSource } from '../source/read-source.js';
import { objectsKubeConfigOf } from './cluster-move-step.js';
import { recordsChildren } from './records-children.js';
import { hookEvents } from './hook-events.js';
import type { ReconcileContext, ReconcilerOptions } from './reconcile-context.js';
import { targetCluster } from './target-cluster.js';

/** What the step reads with: the reconcile's context and the controller's sources. */
export interface PreDeleteDeps extends ReconcileContext {
  readonly options: ReconcilerOptions;
}

/**
 * The PreDelete hooks the engine is to run before its prunes: undefined when there are none to run
 * (the status counts none in the revision last applied, none was applied, no object is left, or the
 * ApplySet is told to skip them); the outcome that keeps the objects when the revision cannot be read.
 */
export async function preDeleteRequest(
  deps: PreDeleteDeps,
  view: ApplySetView,
): Promise<Step<PreDeleteRequest | undefined>> {
  const { applySet } = view;
  const revision = applySet.status?.lastAppliedRevision;
  // No hook counted, nothing applied, or nothing left to delete (a pass that pruned it all but could
  // not take the finalizer off): nothing to run.
  const counted = applySet.status?.preDeleteHooks ?? 0;
  if (counted === 0 || revision === undefined || !recordsChildren(applySet)) return { value: undefined };
  if (applySet.metadata.annotations?.[SKIP_PRE_DELETE_HOOKS_ANNOTATION] === 'true') {
    deps.log.info({ revision }, `deleted: PreDelete hooks skipped (${SKIP_PRE_DELETE_HOOKS_ANNOTATION})`);
    return { value: undefined };
  }
  const keep = (why: string): Step<never> => ({ done: notReadOutcome(revision, why) });
  if (!view.resolved.ok) {
    return keep(`invalid spec: ${view.resolved.errors.map((e) => `${e.field} ${e.message}`).join('; ')}`);
  }
  const pinned = pinRevision(view.resolved.spec, revision);
  if ('problem' in pinned) return keep(pinned.problem);
  const { spec } = pinned;
  const { options } = deps;
  const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(spec.timeoutMs)]);
  const deadline = deps.now() + spec.timeoutMs;
  const { user } = view.account;
  const account = { reader: options.readerAs(user), user, namespace: applySet.metadata.namespace };
  const target = targetCluster(
    {
      ...account,
      remoteClusters: options.remoteClusters,
      account,
      kubeConfig: objectsKubeConfigOf(applySet, spec.kubeConfig),
      signal,
      log: deps.log,
    },
    options.capabilities,
  );
  const read = await readSource(
    options.sources,
    spec,
    {
      account,
      secretRefs: options.tenancy,
      // A commit or a digest never changes: a copy already fetched is the revision.
      maxAgeMs: spec.intervalMs,
      log: deps.log,
      metrics: deps.metrics,
      now: deps.now,
      kustomize: options.kustomize ?? DEFAULT_KUSTOMIZE_OPTIONS,
      ...(target.capabilities === undefined ? {} : { capabilities: target.capabilities }),
    },
    signal,
  );
  if ('done' in read) {
    const done = target.sourceOutcome(read.done);
    return keep(done.kind === 'applied' ? done.revision : done.message);
  }
  const { onHook } = hookEvents(deps, applySet);
  return {
    value: {
      files: read.value.files,
      timeoutMs: spec.timeoutMs,
      deadline,
      ...(onHook === undefined ? {} : { onHook }),
    },
  };
}

/**
 * The outcome of a deletion held by its PreDelete hooks: a failed hook, said as it was run, or any
 * other error undefined. Retried with back-off, whatever the cause: fixing it lets the deletion end.
 */
export function preDeleteHookOutcome(error: unknown): ReconcileOutcome | undefined {
  if (!(error instanceof HookFailedError)) return undefined;
  const failed = error.runs.filter((run) => !run.succeeded).length;
  return {
    kind: 'retryable',
    reason: error.reason,
    message: `${error.message}; the set's objects are kept until ${failed > 1 ? 'they succeed' : 'it succeeds'}`,
  };
}

function notReadOutcome(revision: string, why: string): ReconcileOutcome {
  return {
    kind: 'retryable',
    reason: 'PreDeleteHooksNotRead',
    message: `the PreDelete hooks of revision ${revision} could not be read: ${why}; the set's objects are kept until they can be run (or annotate the ApplySet ${SKIP_PRE_DELETE_HOOKS_ANNOTATION}: "true" to delete them without)`,
  };
}
