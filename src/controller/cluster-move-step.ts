/**
 * Step 8c of reconcile-applyset.ts: an ApplySet whose spec.kubeConfig changed (none to one, one to
 * another, one to none) leaves the cluster its objects are on before anything is applied to the new
 * one. Which cluster that is, is recorded on the ApplySet (APPLIED_KUBECONFIG_ANNOTATION, absent for
 * the controller's own cluster), written before the first apply to a cluster, so a crash between the
 * prune and the apply cannot lose it. The objects there are pruned as a deletion prunes them (the
 * ApplySet's account, the same ownership rules: only what this set owns goes), or released when the
 * set does not prune; then the record follows spec.kubeConfig. Nothing is left behind silently: a
 * previous cluster that does not answer holds the move (a condition and an event say so), and one
 * whose kubeconfig is gone leaves its objects with a Warning event naming them (docs/remote-clusters.md).
 */
import { readJsonValue } from '../input/read-json-value.js';
import type { ApplySet, RemoteKubeConfigRef, ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import type { ApplySetEngine } from '../apply/apply-set-contract.js';
import { classifyFailure } from '../errors/classify-failure.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import type { KubeClient } from '../kube/kube-client.js';
import { parentOf, subjectOf } from '../kube/applyset-api.js';
import type { Step } from '../api/reconcile-outcome.js';
import type { ReconcileContext } from './reconcile-context.js';
import { remoteClusterOf } from './remote-step.js';
import type { RemoteCluster, RemoteClusters } from './runtime/remote-clusters.js';

/**
 * The kubeconfig the ApplySet's objects were applied with, `{"secretRef":{"name":…,"key":…}}` as in
 * spec.kubeConfig; absent: the controller's own cluster.
 */
const APPLIED_KUBECONFIG_ANNOTATION = 'applyset.dev/applied-kubeconfig';

/** What the step needs beyond the reconcile's context. */
export interface ClusterMoveDeps {
  readonly engineFor: (user: string | undefined) => ApplySetEngine;
  readonly reader: KubeClient;
  readonly remoteClusters: RemoteClusters | undefined;
  /** Whether the inventory lists any object (there is something to leave behind). */
  readonly recordsChildren: boolean;
}

/**
 * The ApplySet ready to be applied to the cluster of spec.kubeConfig (written to when the record moved),
 * or the outcome that ends the run with nothing applied.
 */
export async function leavePreviousCluster(
  ctx: ReconcileContext,
  deps: ClusterMoveDeps,
  { applySet, spec, user, target }: MoveRequest,
): Promise<Step<ApplySet>> {
  const recorded = recordedKubeConfig(applySet);
  if (recorded.kind === 'invalid') {
    return stalled(
      'ClusterRecordInvalid',
      `annotation ${APPLIED_KUBECONFIG_ANNOTATION} is not a kubeConfig reference (${recorded.problem}); the controller cannot tell which cluster holds this set's objects. Set it to the spec.kubeConfig they were applied with (remove it for this cluster); nothing was applied`,
    );
  }
  const previous = recorded.ref;
  if (sameRef(previous, spec.kubeConfig)) return { value: applySet };
  if (!deps.recordsChildren) return { value: await record(ctx, applySet, spec.kubeConfig) };

  const from = describe(previous);
  const to = describe(spec.kubeConfig);
  const previousCluster = await clusterOf(ctx, deps, applySet, previous, user);
  if ('left' in previousCluster) {
    const message = `spec.kubeConfig moved the set from ${from} to ${to}; its objects on the previous cluster are left in place: ${previousCluster.left}`;
    ctx.log.warn({}, message);
    await ctx.recordEvent(subjectOf(applySet), { type: 'Warning', reason: 'RemoteChildrenLeft', message });
    return { value: await record(ctx, applySet, spec.kubeConfig) };
  }
  if ('done' in previousCluster) {
    const { done } = previousCluster;
    const reason = done.kind === 'applied' ? '' : done.message;
    return {
      done: {
        kind: 'retryable',
        reason: 'PreviousClusterUnreachable',
        message: `spec.kubeConfig moved the set from ${from} to ${to}, and its objects there must be pruned first: ${reason}. Nothing was applied to ${to}. Bring the previous cluster back, set spec.kubeConfig back, or delete the previous kubeconfig Secret to leave the objects there`,
      },
    };
  }
  // A remote kubeconfig replaced by another of the same server is no move: the objects are where they were.
  if (target !== undefined && previousCluster.value.remote?.server === target.server) {
    return { value: await record(ctx, applySet, spec.kubeConfig) };
  }
  const left = await pruneThere(ctx, previousCluster.value.engineFor(user), applySet, spec);
  if ('done' in left) {
    const { done } = left;
    return done.kind === 'applied'
      ? left
      : {
          done: { ...done, message: `spec.kubeConfig moved the set from ${from} to ${to}: ${done.message}` },
        };
  }
  ctx.log.info(
    { from, to, [spec.prune ? 'pruned' : 'released']: left.value.count },
    'moved to another cluster',
  );
  await ctx.recordEvent(subjectOf(left.value.applySet), {
    type: 'Normal',
    reason: 'ClusterChanged',
    message: `spec.kubeConfig moved the set from ${from} to ${to}: ${left.value.count} object(s) ${spec.prune ? 'pruned' : 'released'} on the previous cluster`,
  });
  return { value: await record(ctx, left.value.applySet, spec.kubeConfig) };
}

interface MoveRequest {
  readonly applySet: ApplySet;
  readonly spec: ResolvedApplySetSpec;
  readonly user: string | undefined;
  /** The cluster spec.kubeConfig names, already reached (step 9); undefined: the controller's own. */
  readonly target: RemoteCluster | undefined;
}

/**
 * The kubeconfig of the cluster holding the objects, for the finalizer: the record, or spec.kubeConfig
 * when there is none (or it is damaged: the deletion then goes where the spec points, as it always did).
 */
export function objectsKubeConfigOf(
  applySet: ApplySet,
  specRef: RemoteKubeConfigRef | undefined,
): RemoteKubeConfigRef | undefined {
  if (applySet.metadata.annotations?.[APPLIED_KUBECONFIG_ANNOTATION] === undefined) return specRef;
  const recorded = recordedKubeConfig(applySet);
  return recorded.kind === 'ok' ? recorded.ref : specRef;
}

type Recorded =
  | { readonly kind: 'ok'; readonly ref: RemoteKubeConfigRef | undefined }
  | { readonly kind: 'invalid'; readonly problem: string };

function recordedKubeConfig(applySet: ApplySet): Recorded {
  const text = applySet.metadata.annotations?.[APPLIED_KUBECONFIG_ANNOTATION];
  if (text === undefined) return { kind: 'ok', ref: undefined };
  let parsed: unknown;
  try {
    // A tenant may edit the annotation: read as tenant input, bounded.
    parsed = readJsonValue(text, `annotation ${APPLIED_KUBECONFIG_ANNOTATION}`, 'kubeconfig');
  } catch (error) {
    return { kind: 'invalid', problem: classifyFailure(error).message };
  }
  const secretRef = (parsed as { secretRef?: { name?: unknown; key?: unknown } } | null)?.secretRef;
  const name = secretRef?.name;
  const key = secretRef?.key;
  if (typeof name !== 'string' || name === '' || (key !== undefined && typeof key !== 'string')) {
    return { kind: 'invalid', problem: 'it names no secretRef.name' };
  }
  return { kind: 'ok', ref: { secretName: name, key } };
}

function sameRef(a: RemoteKubeConfigRef | undefined, b: RemoteKubeConfigRef | undefined): boolean {
  return a?.secretName === b?.secretName && a?.key === b?.key;
}

function describe(ref: RemoteKubeConfigRef | undefined): string {
  if (ref === undefined) return "the controller's own cluster";
  return `the cluster of Secret ${ref.secretName}${ref.key === undefined ? '' : `, key ${ref.key}`}`;
}

type PreviousCluster =
  | { readonly value: { readonly engineFor: ClusterMoveDeps['engineFor']; readonly remote?: RemoteCluster } }
  | { readonly done: ReconcileOutcome }
  | { readonly left: string };

/**
 * The previous cluster, reached as any remote cluster is (its Secret read as the ApplySet's account);
 * a kubeconfig that can no longer be used has its objects left, as a deletion leaves them.
 */
async function clusterOf(
  ctx: ReconcileContext,
  deps: ClusterMoveDeps,
  applySet: ApplySet,
  ref: RemoteKubeConfigRef | undefined,
  user: string | undefined,
): Promise<PreviousCluster> {
  if (ref === undefined) return { value: { engineFor: deps.engineFor } };
  const { namespace } = applySet.metadata;
  const remote = await remoteClusterOf(deps.reader, deps.remoteClusters, { user, namespace }, ref, {
    signal: ctx.signal,
    log: ctx.log,
  });
  if ('value' in remote) return { value: { engineFor: remote.value.engineFor, remote: remote.value } };
  if (remote.done.kind === 'stalled') return { left: remote.done.message };
  return remote;
}

/** Prunes (or, without spec.prune, releases) every object of the inventory with `engine`. */
async function pruneThere(
  ctx: ReconcileContext,
  engine: ApplySetEngine,
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
): Promise<Step<{ applySet: ApplySet; count: number }>> {
  const release = !spec.prune || spec.pruneDryRun;
  try {
    const result = await engine({
      input: {
        files: [],
        parent: parentOf(applySet),
        defaultNamespace: spec.targetNamespace ?? applySet.metadata.namespace,
      },
      write: { dryRun: false, force: false, adopt: false },
      prune: release ? { mode: 'off' } : { mode: 'delete', allowEmpty: true },
      release,
      signal: ctx.signal,
    });
    const failed = result.outcomes.flatMap((o) => (o.action === 'failed' ? [o.message] : []));
    if (failed.length > 0 || !result.completed) {
      return {
        done: {
          kind: 'retryable',
          reason: 'PruneFailed',
          message: `${release ? 'releasing' : 'pruning'} its objects on the previous cluster failed: ${failed.join('; ')}; nothing was applied to the new one`,
        },
      };
    }
    const count = result.outcomes.filter((o) =>
      release ? o.action === 'prune-skipped' && o.released === true : o.action === 'pruned',
    ).length;
    if (!release) ctx.metrics.countObjects('pruned', count);
    // The engine narrowed the inventory: the record is written on the version it left.
    const moved = await ctx.api.get(applySet.metadata.namespace, applySet.metadata.name, ctx.signal);
    if (moved === undefined)
      return { done: { kind: 'retryable', reason: 'ParentNotFound', message: 'the ApplySet is gone' } };
    return { value: { applySet: moved, count } };
  } catch (error) {
    rethrowAbort(error);
    const failure = classifyFailure(error);
    const intent = failure.intent === 'waiting' ? 'retryable' : failure.intent;
    return {
      done: {
        kind: intent,
        reason: failure.reason,
        message: `${release ? 'releasing' : 'pruning'} its objects on the previous cluster failed: ${failure.message}; nothing was applied to the new one`,
      },
    };
  }
}

/** Writes spec.kubeConfig as the record, guarded by the resourceVersion; the ApplySet as written. */
async function record(
  ctx: ReconcileContext,
  applySet: ApplySet,
  ref: RemoteKubeConfigRef | undefined,
): Promise<ApplySet> {
  const value =
    ref === undefined
      ? null
      : JSON.stringify({
          secretRef: { name: ref.secretName, ...(ref.key === undefined ? {} : { key: ref.key }) },
        });
  return ctx.api.setAnnotation(applySet, APPLIED_KUBECONFIG_ANNOTATION, value, ctx.signal);
}

function stalled(reason: string, message: string): { done: ReconcileOutcome } {
  return { done: { kind: 'stalled', reason, message } };
}
