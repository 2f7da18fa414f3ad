import type { HealthCheckExpr } from '../../health/cel-health.js';
import type { ArtifactLimits } from '../../source/oci/artifact-limits.js';
import { hostname } from 'node:os';
import type { Tracer } from '@opentelemetry/api';
import type { KubeCredentials } from '../../kube/kube-credentials.js';
import type { ProxyEnvironment } from '../../net/proxy-environment.js';
import type { SourceHostList } from '../../net/host-list.js';
import type { GitFetchLimits } from '../../git/git-fetch-limits.js';
import type { KustomizeOptions } from '../../kustomize/run-kustomize.js';
import type { DispatcherSettings } from '../../notify/notification-dispatcher.js';
import type { RemoteKubeConfigPolicy } from '../remote-kube-config.js';

export interface ControllerConfig {
  /**
   * The kubeconfig's credentials, made (and its TLS files read) once where it was loaded; every
   * client of the controller uses them, so one exec plugin run or tokenFile read serves them all.
   */
  readonly credentials: KubeCredentials;
  /** ApplySets reconciled at once. */
  readonly concurrency: number;
  /** `:8080`; `:0` picks a free port. */
  readonly metricsAddress: string;
  readonly leaderElect: boolean;
  /** Watch this namespace only; undefined watches all. */
  readonly namespace: string | undefined;
  /** Watch only the ApplySets this label selector matches (`--watch-label-selector`, a shard). */
  readonly watchLabelSelector?: string;
  readonly gitCacheDir: string;
  /** What one fetch may bring (`--git-max-object-bytes`, `--git-max-fetch-bytes`, `--git-max-fetch-objects`). */
  readonly gitFetchLimits?: GitFetchLimits;
  /**
   * `--member-watches` and `--member-watch-min-sets`: at most `maxWatches` watches of the objects
   * ApplySets hold, one opened for a collection `minSets` sets read at rest; DEFAULT_MEMBER_WATCHES
   * when not given.
   */
  readonly memberWatches?: { readonly maxWatches: number; readonly minSets: number };
  /** `--shared-fetch-max-age`: how old a fetch made for another ApplySet a new ApplySet takes (0: none). */
  readonly sharedFetchMaxAgeMs?: number;
  /** The Git cache's bytes on disk in total (`--git-cache-max-bytes`). */
  readonly gitCacheMaxBytes?: number;
  /** One repository's bytes on disk before its next fetch starts it over (`--git-cache-max-repository-bytes`). */
  readonly gitCacheMaxRepositoryBytes?: number;
  /** `--oci-max-*`: what one OCI artifact's layer may cost; DEFAULT_ARTIFACT_LIMITS when not given. */
  readonly ociArtifactLimits?: ArtifactLimits;
  /** `--oci-cache-max-bytes`: extracted artifacts kept on disk; DEFAULT_OCI_CACHE_MAX_BYTES when not given. */
  readonly ociCacheMaxBytes?: number;
  /** `--kustomize-binary`, `--kustomize-timeout`, `--kustomize-max-memory`. */
  readonly kustomize?: KustomizeOptions;
  /** `--max-builds`, `--max-builds-per-namespace`: builds (kustomize) at once, in all and of one namespace. */
  readonly builds?: { readonly maxRunning: number; readonly maxRunningPerNamespace: number };
  /**
   * The tracer each reconcile's trace starts with (OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_*
   * variables, src/cli/tracing-env.ts); undefined: tracing off, no span made.
   */
  readonly tracer?: Tracer;
  /** `--notification-rate`, `--notification-timeout`, `--notification-attempts`, `--notification-queue-length`. */
  readonly notifications?: DispatcherSettings;
  /** `--health-check-exprs`: the cluster's default CEL health checks; an ApplySet's own win per kind. */
  readonly healthCheckExprs?: readonly HealthCheckExpr[];
  /** POD_NAME, else hostname and pid. */
  readonly identity: string;
  /** Where the Lease lives: POD_NAMESPACE, else --namespace, else default. */
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** How long in-flight reconciles may run after a shutdown request before they are aborted. */
  readonly shutdownGraceMs: number;
  readonly watchStallTimeoutMs?: number;
  /** Hosts a source URL may name (`--allowed-source-hosts`); empty: any. */
  readonly allowedSourceHosts?: SourceHostList;
  /** HTTPS_PROXY, HTTP_PROXY, NO_PROXY of the controller's environment: sources, notifications, remote clusters. */
  readonly proxies?: ProxyEnvironment;
  /**
   * Refuse Git credentials Secrets without `applyset.dev/source-hosts`: on from the command line unless
   * `--apply-as-controller` (without `--require-secret-source-hosts`).
   */
  readonly requireSecretSourceHosts?: boolean;
  /**
   * An ApplySet without spec.serviceAccountName is applied as this ServiceAccount of its own namespace,
   * never as the controller: `applyset-deployer`, or `--default-service-account`. Undefined only under
   * `--apply-as-controller`, where such an ApplySet is applied with the controller's own rights.
   */
  readonly defaultServiceAccountName?: string;
  /**
   * `--allow-secret-refs-from`: namespaces whose Secrets an ApplySet of another namespace may name as its
   * Git credentials. Empty or absent: none (a secretRef is read in the ApplySet's own namespace only).
   */
  readonly allowSecretRefsFrom?: readonly string[];
  /**
   * Every reference stays in the ApplySet's namespace (no allow list): on from the command line unless
   * `--allow-cross-namespace-refs`.
   */
  readonly noCrossNamespaceRefs?: boolean;
  /**
   * `--allow-nested-applysets`: an ApplySet's manifests may create and change ApplySets (app of apps).
   * Off by default: whoever writes a repository could otherwise name any ServiceAccount the controller
   * may impersonate in that namespace.
   */
  readonly allowNestedApplySets?: boolean;
  /** `--webhook-addr`: serve push webhooks there; with `webhookSecret`. */
  readonly webhookAddress?: string;
  /** `--webhook-secret NAMESPACE/NAME`: the receivers (key) and their secrets (value). */
  readonly webhookSecret?: string;
  /**
   * What a kubeconfig of spec.kubeConfig may hold and name: `--allow-remote-kubeconfig-exec`,
   * `--allow-remote-kubeconfig-files`, `--allowed-remote-cluster-hosts`. Default: inline data only, any
   * server but loopback, the controller's own addresses, link-local and cloud metadata.
   */
  readonly remoteKubeConfig?: RemoteKubeConfigPolicy;
  /**
   * `--ui-address`: serve the web view there, every request authenticated with a bearer token
   * (docs/web-view-cluster.md). Undefined: no view.
   */
  readonly uiAddress?: string;
  /**
   * `--cluster-name`: the cluster as notifications name it (the `cluster` label of an Alertmanager
   * alert, a commit status's context). Default `in-cluster`.
   */
  readonly clusterName?: string;
  /** How often the Secrets of ApplySets that are not Ready are checked for a change. Default 5 s. */
  readonly secretPollIntervalMs?: number;
}

export interface RunningController {
  /** Stop taking work, finish in-flight reconciles, release the Lease, close the HTTP server. */
  stop(): Promise<void>;
  /** Resolves with why the controller ended: asked to stop, or it lost the leadership. */
  readonly done: Promise<'stopped' | 'lost-leadership'>;
  readonly port: number;
}

export function defaultIdentity(env: Readonly<Record<string, string | undefined>>): string {
  const pod = env['POD_NAME'];
  return pod !== undefined && pod !== '' ? pod : `${hostname()}-${process.pid}`;
}
