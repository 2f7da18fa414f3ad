/**
 * The cluster a set applies to, as steps 8 and 9 of a reconcile share it. A chart is rendered (step 8)
 * with the capabilities of that cluster, but the remote cluster of spec.kubeConfig is reached only at
 * step 9, after the source was read: a bad source stops the run before anything is asked of the
 * target. So the render is handed a lazy `capabilities()`: only a chart asks it, and for a remote
 * cluster it runs step 9's read-only part then (the kubeconfig Secret read as the account, the
 * cluster's first answer), once per reconcile; step 9 takes the same answer rather than asking again.
 */
import type { ReconcileOutcome, Step } from '../api/reconcile-outcome.js';
import type { RemoteKubeConfigRef } from '../api/applyset-types.js';
import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../observability/create-logger.js';
import { remoteClusterOf } from './remote-step.js';
import type { RemoteCluster, RemoteClusters } from './runtime/remote-clusters.js';

export interface TargetCluster {
  /** Step 9: the remote cluster, reachable, or the outcome that ends the run; undefined: the controller's own. */
  remote(): Promise<Step<RemoteCluster> | undefined>;
  /** The target's capabilities for a render; undefined when the controller was given none (tests). */
  readonly capabilities: (() => Promise<ClusterCapabilities>) | undefined;
  /**
   * The outcome of a failed step 8: step 9's when the render failed reaching the remote cluster (a
   * missing kubeconfig Secret stalls as it would at step 9), else the source's own.
   */
  sourceOutcome(outcome: ReconcileOutcome): ReconcileOutcome;
}

export function targetCluster(
  reach: {
    readonly reader: KubeClient;
    readonly remoteClusters: RemoteClusters | undefined;
    readonly account: { readonly user: string | undefined; readonly namespace: string };
    readonly kubeConfig: RemoteKubeConfigRef | undefined;
    readonly signal: AbortSignal;
    readonly log: Pick<Logger, 'error'>;
  },
  local: (() => Promise<ClusterCapabilities>) | undefined,
): TargetCluster {
  const { kubeConfig } = reach;
  let reached: Promise<Step<RemoteCluster>> | undefined;
  let settled: Step<RemoteCluster> | undefined;
  const remote = async (): Promise<Step<RemoteCluster> | undefined> => {
    if (kubeConfig === undefined) return undefined;
    reached ??= remoteClusterOf(reach.reader, reach.remoteClusters, reach.account, kubeConfig, reach);
    settled = await reached;
    return settled;
  };
  const remoteCapabilities = async (): Promise<ClusterCapabilities> => {
    const cluster = await remote();
    if (cluster === undefined || 'done' in cluster) {
      // sourceOutcome reports step 9's own outcome in place of the render's failure.
      throw new Error('the remote cluster of spec.kubeConfig is not reachable');
    }
    return cluster.value.capabilities();
  };
  return {
    remote,
    capabilities: kubeConfig === undefined ? local : remoteCapabilities,
    sourceOutcome: (outcome) => (settled !== undefined && 'done' in settled ? settled.done : outcome),
  };
}
