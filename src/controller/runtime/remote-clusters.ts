/**
 * The controller's connections to remote clusters (spec.kubeConfig.secretRef): one per kubeconfig,
 * with its own discovery and OpenAPI (the remote cluster's kinds), shared by every ApplySet and account
 * that names the same kubeconfig, as the controller's own connection is (see sharedEngines). The
 * ApplySet itself, its inventory and status, stay on the controller's cluster, written as the
 * controller.
 */
import { createHash } from 'node:crypto';
import type { ApplySetEngine } from '../../apply/apply-set-contract.js';
import { rethrowAbort } from '../../errors/rethrow-abort.js';
import { remoteClusterPolicy, REMOTE_VERSION_BODY_BYTES } from '../../net/destination-policy.js';
import { DestinationRefusedError, ResponseTooLargeError } from '../../net/destination-refused-error.js';
import { SourceAddressRefusedError } from '../../net/guarded-lookup.js';
import { KubeTransportError } from '../../kube/kube-api-error.js';
import { createKubeClient, type KubeClient } from '../../kube/kube-client.js';
import { createKubeConnection, type KubeConnection } from '../../kube/kube-connection.js';
import { createKubeCredentials } from '../../kube/kube-credentials.js';
import { LruMap } from '../../kube/lru-map.js';
import type { Logger } from '../../observability/create-logger.js';
import { RemoteClusterUnreachableError } from '../remote-cluster-unreachable-error.js';
import { parseRemoteKubeConfig, type RemoteKubeConfigPolicy } from '../remote-kube-config.js';
import { sharedEngines, type EngineHooks } from './shared-engines.js';

/** One remote cluster as a reconcile uses it. */
export interface RemoteCluster {
  /** The server's URL, for messages. */
  readonly server: string;
  /** The engine acting on the remote cluster as `user` (impersonated there), the parent on this one. */
  engineFor(user: string | undefined): ApplySetEngine;
  /**
   * A client that reads the remote cluster as `user` (impersonated there; the kubeconfig's identity
   * when undefined), as the engine does: the web view reads a remote set's objects through it.
   */
  readerAs(user: string | undefined): KubeClient;
  /**
   * Resolves once the server answers `GET /version` (any HTTP status: it is up), within `timeoutMs`;
   * rejects with RemoteClusterUnreachableError. A reconcile asks first, so a cluster that is down costs
   * its ApplySets one short wait each, not a queue slot held for spec.timeout.
   */
  reachable(timeoutMs: number, signal: AbortSignal): Promise<void>;
}

/**
 * The cluster of the kubeconfig `text` read from `from` (for messages); throws
 * RemoteKubeConfigRefusedError, or KubeConfigError for credentials that cannot be used.
 */
export type RemoteClusters = (text: string, from: string) => RemoteCluster;

interface RemoteClustersOptions {
  readonly policy: RemoteKubeConfigPolicy;
  /** The controller's own client, fenced: the ApplySet is read and written with it. */
  readonly parentClient: KubeClient;
  readonly logger: Logger;
  /** Counts each request sent to a remote cluster, with that cluster's server (the controller's metrics). */
  readonly countRequest: (method: string, path: string, server: string) => void;
  readonly writeFence?: () => void;
  readonly hooks?: EngineHooks;
  /** Kubeconfigs kept connected; the least recently used is dropped past it. Default 64. */
  readonly maxClusters?: number;
}

export function remoteClusters(options: RemoteClustersOptions): RemoteClusters {
  // Keyed by the Secret and its bytes: a changed Secret is a new entry (new credentials, a new server),
  // built on its next reconcile; the old one ages out unused. The Secret is in the key because messages
  // name it: another namespace's ApplySet with the same kubeconfig must not read this one's name.
  const clusters = new LruMap<string, RemoteCluster>(options.maxClusters ?? 64);
  return (text, from) => {
    const key = createHash('sha256').update(`${from}\n${text}`).digest('hex');
    const known = clusters.get(key);
    if (known !== undefined) return known;
    const cluster = connectRemote(options, text, from);
    clusters.set(key, cluster);
    return cluster;
  };
}

function connectRemote(options: RemoteClustersOptions, text: string, from: string): RemoteCluster {
  const config = parseRemoteKubeConfig(text, from, options.policy);
  // Exec plugins (when allowed) run with no environment of the controller's: its variables may hold secrets.
  const credentials = createKubeCredentials(config, { env: {} });
  // Names are checked again on what DNS answers when connecting: a rebinding name cannot reach
  // metadata or the controller's own addresses; an answer is read up to the remote cluster's bound.
  const connection: KubeConnection = createKubeConnection({
    credentials,
    policy: remoteClusterPolicy(options.policy.allowedHosts),
  });
  const { logger, writeFence, hooks } = options;
  // Counted under this cluster's own label, not with the controller's requests to its own cluster.
  const countRequest = (method: string, path: string) =>
    options.countRequest(method, path, credentials.server);
  const engineFor = sharedEngines({
    connection,
    parentClient: options.parentClient,
    logger: logger.child({ remoteCluster: credentials.server }),
    countRequest,
    ...(writeFence === undefined ? {} : { writeFence }),
    ...(hooks === undefined ? {} : { hooks }),
  });
  return {
    server: credentials.server,
    engineFor,
    readerAs: (user) =>
      createKubeClient({
        connection,
        onRequest: countRequest,
        ...(user === undefined ? {} : { impersonateUser: user }),
      }),
    reachable: async (timeoutMs, signal) => {
      const probe = createKubeClient({ connection, onRequest: countRequest, timeoutMs });
      try {
        await probe.request({
          method: 'GET',
          path: '/version',
          signal,
          maxBodyBytes: REMOTE_VERSION_BODY_BYTES,
        });
      } catch (error) {
        rethrowAbort(error);
        // A name that resolves to a refused address stalls (SourceNotAllowed), as a Git source's does;
        // an answer past its bound stalls too (ResponseTooLarge): the server is not a Kubernetes one.
        if (error instanceof KubeTransportError && isStallingCause(error.cause)) throw error.cause;
        if (error instanceof KubeTransportError) {
          throw new RemoteClusterUnreachableError(credentials.server, from, { cause: error.cause });
        }
        // An HTTP answer, even a refusal, is a cluster that is up; the apply reports what it refuses.
      }
    },
  };
}

function isStallingCause(cause: unknown): cause is Error {
  return (
    cause instanceof SourceAddressRefusedError ||
    cause instanceof DestinationRefusedError ||
    cause instanceof ResponseTooLargeError
  );
}
