import type { HostListReading } from './destination-url-refusal.js';
import type { SourceHostList } from './host-list.js';
import type { ProxyEnvironment } from './proxy-environment.js';

/**
 * The kinds of place the controller connects to. Each has its own address policy, its own flag that
 * lists hosts, and its own bound on what an answer may weigh (docs/multi-tenancy.md#the-outbound-door).
 */
export type DestinationKind =
  | 'git'
  | 'oci'
  | 'helm-repository'
  | 'remote-cluster'
  | 'notification'
  | 'cluster-notification'
  | 'api-server';

/** Where a request may go, and how much of its answer is read. */
export interface DestinationPolicy {
  readonly kind: DestinationKind;
  /**
   * False only for the controller's own API server (its kubeconfig is the operator's, and in a cluster
   * it is a private address): every destination a tenant can name is checked.
   */
  readonly checkAddresses: boolean;
  readonly allowedHosts: SourceHostList;
  readonly reading: HostListReading;
  /** Bytes of one answer's body read at most; undefined: no bound at this door (see the kind). */
  readonly maxBodyBytes: number | undefined;
  /** The operator's proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); none for the controller's API server. */
  readonly proxies?: ProxyEnvironment | undefined;
}

const MIB = 1024 * 1024;

/**
 * A remote cluster's answers: a list of a few thousand objects weighs tens of MiB, so 64 MiB; a watch is
 * bounded per event by the same number. `/version` is a few hundred bytes (remoteVersionBodyBytes).
 */
const REMOTE_CLUSTER_BODY_BYTES = 64 * MIB;
export const REMOTE_VERSION_BODY_BYTES = 64 * 1024;
/** A receiver's answer is not used: 64 KiB is read at most (an error page), the rest is not waited for. */
const NOTIFICATION_BODY_BYTES = 64 * 1024;
/** How long a TCP (and TLS) connection may take to open, for every kind. */
export const CONNECT_TIMEOUT_MS = 10_000;

const SOURCE_HOSTS_READING: HostListReading = {
  flag: '--allowed-source-hosts',
  hosts: 'allowed source hosts',
};

/**
 * Git sources: `--allowed-source-hosts`, over https, http or ssh (one list for all three); the body is
 * bounded by the fetch limits (docs/git-sources.md).
 */
export function gitPolicy(allowedHosts: SourceHostList, proxies?: ProxyEnvironment): DestinationPolicy {
  return {
    kind: 'git',
    checkAddresses: true,
    allowedHosts,
    reading: { ...SOURCE_HOSTS_READING, schemes: ['https:', 'http:', 'ssh:'] },
    maxBodyBytes: undefined,
    proxies,
  };
}

/**
 * OCI registries (an oci:// spec.source.url) are sources as Git servers are: `--allowed-source-hosts`. Each
 * answer is bounded by its caller (a manifest, a token, a layer's own limit).
 */
export function ociPolicy(allowedHosts: SourceHostList, proxies?: ProxyEnvironment): DestinationPolicy {
  return { ...gitPolicy(allowedHosts, proxies), kind: 'oci', reading: SOURCE_HOSTS_READING };
}

/**
 * The registry of `applyset apply --oci` (src/cli/read-oci-manifests.ts). The CLI runs on the user's
 * machine, for the user: the host they named (`registryHosts`, any port) may be loopback or private (a
 * registry on localhost, in a kind cluster, on the LAN), and a redirect may go to any public host (blob
 * storage); loopback elsewhere, link-local and metadata addresses stay refused, as for every kind.
 */
export function cliOciPolicy(registryHosts: SourceHostList): DestinationPolicy {
  return {
    kind: 'oci',
    checkAddresses: true,
    allowedHosts: registryHosts,
    reading: { flag: '--oci', hosts: 'registry named by --oci', narrows: false },
    maxBodyBytes: undefined,
  };
}

/**
 * Helm chart repositories (spec.helm.chart of an https:// spec.source.url) are sources as Git servers
 * are: `--allowed-source-hosts`. Each answer is bounded by its caller (the index, the chart's archive).
 */
export function helmRepositoryPolicy(
  allowedHosts: SourceHostList,
  proxies?: ProxyEnvironment,
): DestinationPolicy {
  return { ...gitPolicy(allowedHosts, proxies), kind: 'helm-repository', reading: SOURCE_HOSTS_READING };
}

/**
 * The chart repository or registry of `applyset apply --helm-chart` (src/cli/fetch-helm-chart.ts),
 * admitted as cliOciPolicy admits the registry of `--oci`: the host the user named, any port, may be
 * loopback or private; a redirect may go to any public host (a CDN serving the archives).
 */
export function cliHelmChartPolicy(chartHosts: SourceHostList): DestinationPolicy {
  return {
    ...cliOciPolicy(chartHosts),
    kind: 'helm-repository',
    reading: { flag: '--helm-chart', hosts: 'repository named by --helm-chart', narrows: false },
  };
}

/** Remote clusters (spec.kubeConfig.secretRef): `--allowed-remote-cluster-hosts`. */
export function remoteClusterPolicy(allowedHosts: SourceHostList): DestinationPolicy {
  return {
    kind: 'remote-cluster',
    checkAddresses: true,
    allowedHosts,
    reading: { flag: '--allowed-remote-cluster-hosts', hosts: 'allowed remote cluster hosts' },
    maxBodyBytes: REMOTE_CLUSTER_BODY_BYTES,
  };
}

/**
 * Receivers of notifications and commit statuses. A tenant's Notification may not reach loopback, the
 * pod's own or private (cluster-internal) addresses: its body and Bearer token are the tenant's, sent from
 * the controller's place in the network. A ClusterNotification is the platform team's (cluster-scoped, its
 * Secret in the controller's namespace), so it may reach private addresses (an in-cluster Alertmanager's
 * Service) but not loopback or the pod's own. `--internal-notification-hosts` re-admits the hosts it names
 * for both, without narrowing which public hosts are allowed. Link-local and metadata stay refused.
 */
export function notificationPolicy(
  internalHosts: SourceHostList,
  sender: 'notification' | 'cluster-notification',
): DestinationPolicy {
  return {
    kind: sender,
    checkAddresses: true,
    allowedHosts: internalHosts,
    reading: {
      flag: '--internal-notification-hosts',
      hosts: 'internal notification hosts',
      narrows: false,
      refusePrivate: sender === 'notification',
    },
    maxBodyBytes: NOTIFICATION_BODY_BYTES,
  };
}

/** The controller's own API server: its kubeconfig is the operator's; answers are not bounded here. */
export const API_SERVER_POLICY: DestinationPolicy = {
  kind: 'api-server',
  checkAddresses: false,
  allowedHosts: [],
  reading: { flag: '--kubeconfig', hosts: 'API server' },
  maxBodyBytes: undefined,
};
