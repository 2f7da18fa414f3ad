/**
 * Reads the objects of an ApplySet applied to a remote cluster (spec.kubeConfig), for the web view:
 * the controller's (serve-ui.ts), and `applyset ui`'s on the user's machine.
 */
import type { RemoteKubeConfigRef } from '../../api/applyset-types.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { createRestMapper, type RestMapper } from '../../kube/rest-mapper.js';
import type { SourceHostList } from '../../net/host-list.js';
import type { Logger } from '../../observability/create-logger.js';
import { createKubeObjectReader } from '../../ui/kube-ui-data.js';
import type { UiObjectReader } from '../../ui/ui-data.js';
import { remoteClusterOf } from '../remote-step.js';
import type { ControllerClients } from './controller-clients.js';
import { remoteClusters, type RemoteCluster } from './remote-clusters.js';

/**
 * The objects of a set applied to a remote cluster are there, not here: they are read through the
 * kubeconfig of its spec.kubeConfig.secretRef, that Secret read as the set's account and the cluster
 * reached as the reconcile reaches it (remoteClusterOf: the same policy, the same shared connection),
 * then each object read there as the account, impersonated as the engine does. The cluster is looked
 * up once per page, on its first object; a kubeconfig that cannot be used is each object's reason.
 */
export function remoteObjectReader(
  clients: Pick<ControllerClients, 'readerAs' | 'remoteClusters'>,
  remote: {
    readonly user: string | undefined;
    readonly namespace: string;
    readonly kubeConfig: RemoteKubeConfigRef;
    readonly remoteMappers: WeakMap<RemoteCluster, RestMapper>;
    readonly logger: Logger;
  },
): UiObjectReader {
  let reader: Promise<UiObjectReader> | undefined;
  const open = async (signal: AbortSignal | undefined): Promise<UiObjectReader> => {
    const { user, namespace, kubeConfig, remoteMappers, logger } = remote;
    const step = await remoteClusterOf(
      clients.readerAs(user),
      clients.remoteClusters,
      { user, namespace },
      kubeConfig,
      { signal: signal ?? AbortSignal.timeout(REMOTE_LOOKUP_TIMEOUT_MS), log: logger },
    );
    if ('done' in step) {
      const outcome = step.done;
      // remoteClusterOf ends a run only as stalled, retried or waiting, each with its reason in words.
      throw new RemoteObjectsUnreadableError(outcome.kind === 'applied' ? outcome.kind : outcome.message);
    }
    const cluster = step.value;
    // Discovery answers every account alike: one mapper per remote cluster, read as the kubeconfig's identity.
    const mapper = remoteMappers.get(cluster) ?? createRestMapper(cluster.readerAs(undefined));
    remoteMappers.set(cluster, mapper);
    return createKubeObjectReader(cluster.readerAs(user), mapper);
  };
  return async (ref, signal) => {
    reader ??= open(signal);
    return (await reader)(ref, signal);
  };
}

/** How long a page waits for a remote cluster's kubeconfig and first answer when not told. */
const REMOTE_LOOKUP_TIMEOUT_MS = 15_000;

/** The remote cluster of a set cannot be used: the reconcile's own reason, each object's on the page. */
class RemoteObjectsUnreadableError extends Error {
  override readonly name = 'RemoteObjectsUnreadableError';
}

/**
 * `applyset ui` on a user's machine: a remote set's objects are read through the kubeconfig Secret
 * it names, that Secret read as the viewer (the local kubeconfig's user) and the remote cluster as the
 * Secret's own identity. The kubeconfig is held to the controller's default policy (no plugins, no
 * files: a tenant's Secret runs nothing on the viewer's machine), its server to `allowedHosts`
 * (`--allowed-remote-cluster-hosts`) as in the controller.
 */
export function viewerRemoteReader(
  client: KubeClient,
  allowedHosts: SourceHostList,
  logger: Logger,
): (namespace: string, kubeConfig: RemoteKubeConfigRef) => UiObjectReader {
  const clusters = remoteClusters({
    policy: { allowExec: false, allowFiles: false, allowedHosts },
    parentClient: client,
    logger,
    countRequest: () => undefined,
  });
  const clients = { readerAs: () => client, remoteClusters: clusters };
  const remoteMappers = new WeakMap<RemoteCluster, RestMapper>();
  return (namespace, kubeConfig) =>
    remoteObjectReader(clients, { user: undefined, namespace, kubeConfig, remoteMappers, logger });
}
