/**
 * The finalizer's view of spec.kubeConfig: on which cluster a deleted ApplySet's children are pruned or
 * released, and what happens when that cluster cannot be used. A deletion must end: a remote cluster
 * that is gone for good would otherwise hold the ApplySet (and its namespace) forever.
 */
import type { ApplySetEngine } from '../apply/apply-set-contract.js';
import {
  DEFAULT_MAX_RETRY_INTERVAL_MS,
  type ApplySet,
  type RemoteKubeConfigRef,
} from '../api/applyset-types.js';
import type { Requeue } from '../api/requeue.js';
import type { KubeClient } from '../kube/kube-client.js';
import { subjectOf } from '../kube/applyset-api.js';
import type { ReconcileContext } from './reconcile-context.js';
import { remoteClusterOf } from './remote-step.js';
import type { RemoteClusters } from './runtime/remote-clusters.js';

/**
 * How long a deletion waits for an unreachable remote cluster, from the deletion's start, before it
 * lets the ApplySet go and leaves its objects there.
 */
const REMOTE_DELETION_GRACE_MS = 10 * 60_000;

/** What the finalizer needs to reach a remote cluster. */
export interface RemoteDeletionDeps extends ReconcileContext {
  readonly engineFor: (user: string | undefined) => ApplySetEngine;
  readonly readerAs: (user: string | undefined) => KubeClient;
  readonly remoteClusters: RemoteClusters | undefined;
}

/** The engines to prune with; or leave the children where they are; or try again later. */
type DeletionTarget =
  | { readonly kind: 'engine'; readonly engineFor: (user: string | undefined) => ApplySetEngine }
  | { readonly kind: 'leave' }
  | { readonly kind: 'retry'; readonly requeue: Requeue };

/**
 * The cluster the children are on. A kubeconfig that cannot be used (the Secret deleted, unreadable,
 * refused) lets the ApplySet go at once, its remote objects left in place, as Flux does: nothing could
 * reach them. An unreachable cluster is retried with backoff until the deletion is older than
 * REMOTE_DELETION_GRACE_MS, then let go the same way. Either is a Warning event naming why.
 */
export async function deletionTarget(
  deps: RemoteDeletionDeps,
  applySet: ApplySet,
  ref: RemoteKubeConfigRef | undefined,
  user: string | undefined,
): Promise<DeletionTarget> {
  if (ref === undefined) return { kind: 'engine', engineFor: deps.engineFor };
  const { namespace } = applySet.metadata;
  const remote = await remoteClusterOf(deps.readerAs(user), deps.remoteClusters, { user, namespace }, ref, {
    signal: deps.signal,
    log: deps.log,
  });
  if ('value' in remote) return { kind: 'engine', engineFor: remote.value.engineFor };
  const { done } = remote;
  const reason = done.kind === 'applied' ? '' : done.message;
  const deletedAt = Date.parse(applySet.metadata.deletionTimestamp ?? '');
  const waited = Number.isNaN(deletedAt) ? 0 : deps.now() - deletedAt;
  if (done.kind === 'stalled' || waited >= REMOTE_DELETION_GRACE_MS) {
    const message = `deleted without pruning its objects on the remote cluster, which are left in place: ${reason}`;
    deps.log.warn({}, message);
    await deps.recordEvent(subjectOf(applySet), { type: 'Warning', reason: 'RemoteChildrenLeft', message });
    return { kind: 'leave' };
  }
  const message = `pruning the children failed: ${reason} (the deletion lets them go after ${REMOTE_DELETION_GRACE_MS / 60_000} minutes)`;
  deps.log.warn({}, message);
  await deps.recordEvent(subjectOf(applySet), { type: 'Warning', reason: 'PruneFailed', message });
  return { kind: 'retry', requeue: { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS } };
}
