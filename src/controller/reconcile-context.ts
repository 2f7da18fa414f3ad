import type { HealthCheckExpr } from '../health/cel-health.js';
/**
 * What one reconcile works with, made once per reconcile by the story (reconcile-applyset.ts) and
 * handed to its steps: the ApplySet's key, a log line prefix of its own, the calls on ApplySets, and
 * the controller's services. A step takes the context, or only the few values it needs.
 */
import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';
import type { SourceAdapters } from '../source/source-adapter.js';
import { randomBytes } from 'node:crypto';
import type { ApplySetEngine } from '../apply/apply-set-contract.js';
import type { MemberWatches } from './member-watches.js';
import type { BuildScheduler } from '../builds/build-scheduler.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { RestMapper } from '../kube/rest-mapper.js';
import type { ControllerMetrics } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import { currentTraceId } from '../observability/trace-span.js';
import type { Notifier } from '../notify/notifier.js';
import type { ApplySetApi } from '../kube/applyset-api.js';
import type { EventRecorder } from './event-recorder.js';
import type { RemoteClusters } from './runtime/remote-clusters.js';
import type { QueueWorker } from './runtime/worker-pool.js';

/** @internal Who an ApplySet may act as and what it may name outside its namespace: the tenancy flags. */
export interface Tenancy {
  /**
   * `--allow-nested-applysets`: an ApplySet's manifests may hold ApplySets (app of apps), applied as
   * its account, which then needs rights on applysets. Default false: such manifests are refused.
   */
  readonly allowNestedApplySets?: boolean;
  /**
   * `--default-service-account`: the ServiceAccount, in the ApplySet's own namespace, that an ApplySet
   * without spec.serviceAccountName is applied as. Undefined: such an ApplySet is applied as the controller.
   */
  readonly defaultServiceAccountName?: string | undefined;
  /**
   * `--allow-secret-refs-from`: the namespaces whose Secrets an ApplySet of another namespace may name in
   * spec.source.secretRef. Empty (the default): a Secret is only ever read from the ApplySet's own namespace.
   */
  readonly allowSecretRefsFrom: ReadonlySet<string>;
  /**
   * `--no-cross-namespace-refs`: said in a Secret's refusal, so the user knows which setting refused;
   * a spec.dependsOn of another namespace is refused under it.
   */
  readonly noCrossNamespaceRefs: boolean;
}

/** What the runtime hands the reconciler once, for every reconcile. */
export interface ReconcilerOptions {
  /** The controller's own identity: the ApplySet, its finalizer, status and inventory. */
  readonly client: KubeClient;
  /** The calls on ApplySets, made with `client`; undefined: made here (tests of one reconcile). */
  readonly api?: ApplySetApi;
  /** The engine acting as `user` (impersonated) or as the controller itself (undefined). */
  readonly engineFor: (user: string | undefined) => ApplySetEngine;
  /** A client reading as `user` (undefined: the controller): the Git credentials Secret is read with it. */
  readonly readerAs: (user: string | undefined) => KubeClient;
  /** Discovery of the controller's cluster, made once from its client: it answers every account alike. */
  readonly restMapper: RestMapper;
  /** The clusters of spec.kubeConfig; undefined: ApplySets naming one stall. */
  readonly remoteClusters?: RemoteClusters;
  /** The controller's cluster's capabilities, for a chart's render; undefined: helm's built-in defaults. */
  readonly capabilities?: () => Promise<ClusterCapabilities>;
  /** The source types it reads, by spec.source.kind (src/source/source-adapters.ts); another stalls. */
  readonly sources: SourceAdapters;
  /**
   * `--shared-fetch-max-age`: a new ApplySet takes a fetch of its source this young that another set
   * made; DEFAULT_SHARED_FETCH_MAX_AGE_MS (off) when not given.
   */
  readonly sharedFetchMaxAgeMs?: number;
  /** How a source holding a kustomization is built; the defaults of DEFAULT_KUSTOMIZE_OPTIONS if not given. */
  readonly kustomize?: KustomizeOptions;
  /** Where builds run, fairly among namespaces; none: each build runs at once (tests of one reconcile). */
  readonly builds?: BuildScheduler;
  /** Watches of the objects many sets hold, for the reconciles at rest (`--member-watches`); none: GETs. */
  readonly memberWatches?: MemberWatches;
  readonly tenancy: Tenancy;
  /** `--health-check-exprs`: the cluster's default CEL health checks, already checked; an ApplySet's own win per kind. */
  readonly healthCheckExprs?: readonly HealthCheckExpr[];
  readonly recordEvent: EventRecorder;
  /** Hands a reported outcome to the notifications, which send it in the background; none: off. */
  readonly notify?: Notifier;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly now: () => number;
  /** Aborted when the controller must stop at once (after the shutdown grace period, or leadership lost). */
  readonly signal: AbortSignal;
}

/** One reconcile's own values, and the services its steps write through. */
export interface ReconcileContext {
  /** `namespace/name`, the work queue's key. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** Every line of this reconcile carries the ApplySet and a reconcile id. */
  readonly log: Logger;
  readonly api: ApplySetApi;
  readonly recordEvent: EventRecorder;
  readonly notify: Notifier | undefined;
  readonly metrics: ControllerMetrics;
  readonly now: () => number;
  readonly signal: AbortSignal;
  /** The work queue's worker this reconcile holds, handed back while a build waits and runs. */
  readonly worker: QueueWorker | undefined;
}

export function reconcileContext(
  options: ReconcilerOptions,
  api: ApplySetApi,
  key: string,
  worker?: QueueWorker,
): ReconcileContext {
  const [namespace = '', name = ''] = key.split('/');
  return {
    key,
    namespace,
    name,
    log: options.logger.child({ applyset: key, reconcileId: randomBytes(4).toString('hex'), ...traceOf() }),
    api,
    recordEvent: options.recordEvent,
    notify: options.notify,
    metrics: options.metrics,
    now: options.now,
    signal: options.signal,
    worker,
  };
}

/** The trace this reconcile runs in (tracing on and this trace sampled), for every line it logs. */
function traceOf(): { trace_id?: string } {
  const traceId = currentTraceId();
  return traceId === undefined ? {} : { trace_id: traceId };
}
