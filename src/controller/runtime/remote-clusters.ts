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
import { createCapabilitiesSource, type ClusterCapabilities } from '../../kube/cluster-capabilities.js';
import { createKubeConnection, type KubeConnection } from '../../kube/kube-connection.js';
import { createKubeCredentials, type KubeCredentials } from '../../kube/kube-credentials.js';
import { KubeConfigError } from '../../kube/kubeconfig-error.js';
import type { KubeConfig } from '../../kube/kubeconfig-model.js';
import { LruMap } from '../../kube/lru-map.js';
import type { Logger } from '../../observability/create-logger.js';
import { RemoteClusterUnreachableError } from '../remote-cluster-unreachable-error.js';
import {
  parseRemoteKubeConfig,
  RemoteKubeConfigRefusedError,
  type RemoteKubeConfigPolicy,
} from '../remote-kube-config.js';
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
  /** Its version and API versions (discovery, read with the kubeconfig's identity and kept): a chart's `.Capabilities`. */
  capabilities(): Promise<ClusterCapabilities>;
}

/**
 * The cluster of the kubeconfig `text` read from `from` (for messages); throws
 * RemoteKubeConfigRefusedError, also for credentials that cannot be used.
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
  /** What requests to a remote cluster name as their client; default the CLI's (kubeUserAgent). */
  readonly userAgent?: string;
  /** Kubeconfigs kept connected; the least recently used is dropped past it. Default 64. */
  readonly maxClusters?: number;
}

export function remoteClusters(options: RemoteClustersOptions): RemoteClusters {
  // Keyed by the Secret (and key) it was read from: messages name it, so another namespace's ApplySet
  // with the same kubeconfig must not share this one's entry. A changed Secret (new credentials, a new
  // server) replaces its entry and closes the old connection, as does the bound dropping the least
  // recently used one: a controller living for months must not keep sockets to clusters nobody names.
  const clusters = new LruMap<string, Connected>(options.maxClusters ?? 64, {
    onEvict: (_from, dropped) => dropped.connection.close(),
  });
  return (text, from) => {
    const digest = createHash('sha256').update(text).digest('hex');
    const known = clusters.get(from);
    if (known?.digest === digest) return known.cluster;
    const connected = connectRemote(options, text, from);
    clusters.set(from, { digest, ...connected });
    known?.connection.close();
    return connected.cluster;
  };
}

/** A cache entry: the cluster, the digest of the kubeconfig it was made from, and its connection. */
interface Connected {
  readonly digest: string;
  readonly cluster: RemoteCluster;
  readonly connection: KubeConnection;
}

/**
 * The credentials of an accepted kubeconfig. What it holds but cannot be used (a client certificate
 * without its key, a file that cannot be read) is the Secret's to fix like any refused feature: it
 * stalls as KubeConfigRefused naming the field, rather than failing every apply as ApplyFailed.
 */
function remoteCredentials(config: KubeConfig, from: string, userAgent?: string): KubeCredentials {
  try {
    // Exec plugins (when allowed) run with no environment of the controller's: its variables may hold secrets.
    return createKubeCredentials(config, { env: {}, ...(userAgent === undefined ? {} : { userAgent }) });
  } catch (error) {
    if (!(error instanceof KubeConfigError)) throw error;
    throw new RemoteKubeConfigRefusedError(`the kubeconfig of ${from} is refused: ${error.message}`, {
      cause: error,
    });
  }
}

function connectRemote(
  options: RemoteClustersOptions,
  text: string,
  from: string,
): Omit<Connected, 'digest'> {
  const config = parseRemoteKubeConfig(text, from, options.policy);
  const credentials = remoteCredentials(config, from, options.userAgent);
  // Names are checked again on what DNS answers when connecting: a rebinding name cannot reach
  // metadata or the controller's own addresses; an answer is read up to the remote cluster's bound.
  const connection: KubeConnection = createKubeConnection({
    credentials,
    policy: { ...remoteClusterPolicy(options.policy.allowedHosts), proxies: options.policy.proxies },
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
  const cluster: RemoteCluster = {
    server: credentials.server,
    engineFor,
    capabilities: createCapabilitiesSource(createKubeClient({ connection, onRequest: countRequest })),
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
  return { cluster, connection };
}

function isStallingCause(cause: unknown): cause is Error {
  return (
    cause instanceof SourceAddressRefusedError ||
    cause instanceof DestinationRefusedError ||
    cause instanceof ResponseTooLargeError
  );
}
