/**
 * The clients of the controller, all made from the one credentials object of its kubeconfig (made in
 * the composition root, src/cli/controller-command.ts): the controller's own client, the Lease's
 * unfenced one and the engines' shared connection send the same credential, so an exec plugin runs
 * once for all of them (and a tokenFile is read once a period), not once per connection.
 */
import type { ApplySetEngine } from '../../apply/apply-set-contract.js';
import { createKubeClient, type KubeClient } from '../../kube/kube-client.js';
import { createKubeConnection } from '../../kube/kube-connection.js';
import { MAX_MEMBER_WATCHES } from '../member-watches.js';
import { createCapabilitiesSource, type ClusterCapabilities } from '../../kube/cluster-capabilities.js';
import type { Logger } from '../../observability/create-logger.js';
import type { ControllerConfig } from './controller-config.js';
import { LeadershipLostError, type LeaderElection } from './leader-election.js';
import { remoteClusters, type RemoteClusters } from './remote-clusters.js';
import { sharedEngines, type EngineHooks } from './shared-engines.js';

/** The clients of the controller, all counted by its metrics: the one door to the API server. */
export interface ControllerClients {
  /** The controller's own identity; its writes pass the leader fence. */
  readonly client: KubeClient;
  /** An unfenced client: the Lease's own requests, and the webhook's annotation of ApplySets. */
  unfenced(): KubeClient;
  /**
   * An engine acting as the impersonated user (the ApplySet's ServiceAccount), its writes fenced too.
   * Engines are made per reconcile and hold nothing of their own: see sharedEngines.
   */
  engineFor(user: string | undefined): ApplySetEngine;
  /**
   * A client reading as `user` (impersonated; the controller itself when undefined), on the engines'
   * connection: the Git credentials Secret of an ApplySet is read as its account, never with the
   * controller's rights (issue #23).
   */
  readerAs(user: string | undefined): KubeClient;
  /**
   * A client acting as `user` (the controller itself when undefined) for the watches of ApplySets'
   * objects (member-watches.ts), on a connection of their own: a watch holds its socket for minutes,
   * which the engines' pool must not lose.
   */
  watcherAs(user: string | undefined): KubeClient;
  /** The clusters ApplySets name in spec.kubeConfig, connected on first use (see remoteClusters). */
  readonly remoteClusters: RemoteClusters;
  /** The controller's cluster's version and API versions, for a chart's render; read as the controller, kept. */
  capabilities(): Promise<ClusterCapabilities>;
}

interface ControllerClientsOptions {
  readonly config: Pick<ControllerConfig, 'credentials' | 'leaderElect' | 'remoteKubeConfig'>;
  readonly hooks?: EngineHooks;
  readonly logger: Logger;
  /**
   * Counts each request sent (the controller's metrics): to the controller's own cluster without
   * `server`, to a remote cluster with its server's URL.
   */
  readonly countRequest: (method: string, path: string, server?: string) => void;
  /** The election, once started: the fence asks it whether this replica still leads. */
  readonly leadership: { readonly election?: LeaderElection };
}

export function controllerClients(options: ControllerClientsOptions): ControllerClients {
  const { config, logger, countRequest, leadership } = options;
  // With leader election, every write of this replica (children, inventory, status, events) must
  // prove in the same tick that the Lease is still ours; only the Lease's own requests are exempt.
  const writeFence = config.leaderElect
    ? () => {
        if (leadership.election === undefined) throw new LeadershipLostError();
        leadership.election.assertLeading();
      }
    : undefined;
  const fenced = writeFence === undefined ? {} : { writeFence };
  const { credentials } = config;
  const client = createKubeClient({ onRequest: countRequest, credentials, ...fenced });
  const connection = createKubeConnection({ credentials });
  const engineFor = sharedEngines({
    connection,
    logger,
    countRequest,
    ...fenced,
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  });
  const unfenced = () => createKubeClient({ onRequest: countRequest, credentials });
  const readerAs = (user: string | undefined) =>
    user === undefined
      ? client
      : createKubeClient({ connection, onRequest: countRequest, impersonateUser: user });
  // Sockets enough for every watch (--member-watches is bounded) and a LIST beside each.
  const watches = createKubeConnection({ credentials, maxSockets: 2 * MAX_MEMBER_WATCHES });
  const watcherAs = (user: string | undefined) =>
    createKubeClient({
      connection: watches,
      onRequest: countRequest,
      ...(user === undefined ? {} : { impersonateUser: user }),
    });
  const remote = remoteClusters({
    policy: config.remoteKubeConfig ?? { allowExec: false, allowFiles: false, allowedHosts: [] },
    parentClient: client,
    userAgent: credentials.userAgent,
    logger,
    countRequest,
    ...fenced,
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  });
  // Discovery only reads, and answers every user alike: as the controller, unfenced (see sharedEngines).
  const capabilities = createCapabilitiesSource(createKubeClient({ connection, onRequest: countRequest }));
  return { client, unfenced, engineFor, readerAs, watcherAs, remoteClusters: remote, capabilities };
}
