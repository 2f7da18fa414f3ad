/**
 * The controller's Prometheus metrics: the fleet's (reconciles, objects, Git fetches, API requests,
 * the queue) and, through applyset-metrics.ts, the series of each ApplySet.
 */

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import {
  createApplySetMetrics,
  type ApplySetMetrics,
  type ObjectAction,
  type ReconcileResult,
} from './applyset-metrics.js';

export type { ReconcileResult } from './applyset-metrics.js';

/** The ApplySet a reconcile or a count is about, for its own series. */
interface ApplySetName {
  readonly namespace: string;
  readonly name: string;
}

export interface ControllerMetrics
  extends Pick<ApplySetMetrics, 'setReady' | 'setRevision' | 'countDrift' | 'countFights'> {
  readonly registry: Registry;
  /** Fleet-wide by result, and in the ApplySet's own series when `applySet` is given (not once deleted). */
  observeReconcile(result: ReconcileResult, seconds: number, applySet?: ApplySetName): void;
  /** Fleet-wide by action, and in the ApplySet's own series by verb when `applySet` is given. */
  countObjects(action: ObjectAction, count: number, applySet?: ApplySetName): void;
  observeGitFetch(result: 'success' | 'failure', seconds: number): void;
  /** A reconcile found nothing changed since the set's last run in full, and did not apply again. */
  countUnchanged(): void;
  /**
   * One request sent to an API server (every client of the controller counts here): the controller's
   * own when `server` is not given, else the remote cluster at that URL (spec.kubeConfig). A GET of a
   * discovery or OpenAPI document is counted by document too.
   */
  countKubeRequest(verb: string, path: string, server?: string): void;
  /** Sampled at scrape time. */
  setQueueDepthSource(depth: () => number): void;
  /** The watches of ApplySets' objects open now (member-watches.ts), sampled at scrape time. */
  setMemberWatchesSource(count: () => number): void;
  /** Builds waiting for a slot and running (all namespaces together: no namespace label), sampled at scrape time. */
  setBuildCountsSource(counts: () => { readonly queued: number; readonly running: number }): void;
  /** A namespace's builds were held back because they kept running past their time limit. */
  countBuildsHeldBack(): void;
  /** Whether this replica reconciles: it holds the Lease, or leader election is off. */
  setLeader(leading: boolean): void;
  /** One notification, by how it ended: sent, retried (one failed try), dropped or filtered. */
  countNotification(result: 'sent' | 'retried' | 'dropped' | 'filtered'): void;
}

/** The controller's Prometheus metrics, in a registry of their own (no global state). */
export function createControllerMetrics(): ControllerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const perApplySet = createApplySetMetrics(registry);
  const runs = createRunMetrics(registry, perApplySet);
  const kubeRequests = new Counter({
    name: 'applyset_kube_requests_total',
    help: 'Requests the controller sent to API servers, by cluster ("local" is its own; a remote cluster is its server\'s host:port) and verb (the Lease and each watch connection included).',
    labelNames: ['cluster', 'verb'] as const,
    registers: [registry],
  });
  const schemaRequests = new Counter({
    name: 'applyset_kube_schema_requests_total',
    help: 'Discovery and OpenAPI documents the controller fetched, for every identity it acts as, by cluster and document kind.',
    labelNames: ['cluster', 'document'] as const,
    registers: [registry],
  });
  // 0 until this replica leads, so an alert can tell a fleet of replicas where none reconciles.
  const leader = new Gauge({
    name: 'applyset_leader',
    help: 'Whether this replica reconciles ApplySets: 1 while it holds the leader Lease (or leader election is off), else 0.',
    registers: [registry],
  });
  leader.set(0);
  const notifications = new Counter({
    name: 'applyset_notifications_total',
    help: 'Notifications, by result: sent, retried (a try that failed), dropped (given up or no room), filtered (already sent).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const clusterLabel = boundedClusterLabels(MAX_REMOTE_CLUSTER_LABELS);
  let depthSource: () => number = () => 0;
  new Gauge({
    name: 'applyset_queue_depth',
    help: 'ApplySets due for a reconcile: waiting for a worker or being reconciled.',
    registers: [registry],
    collect() {
      this.set(depthSource());
    },
  });
  let memberWatchesSource: () => number = () => 0;
  new Gauge({
    name: 'applyset_member_watches',
    help: 'Watches of the objects ApplySets hold (one kind in one namespace, opened as the account of the sets that read it at rest).',
    registers: [registry],
    collect() {
      this.set(memberWatchesSource());
    },
  });
  const builds = createBuildMetrics(registry);
  return {
    registry,
    ...runs,
    setReady: perApplySet.setReady,
    setRevision: perApplySet.setRevision,
    countDrift: perApplySet.countDrift,
    countFights: perApplySet.countFights,
    countKubeRequest(verb, path, server) {
      const cluster = clusterLabel(server);
      kubeRequests.inc({ cluster, verb });
      const document = verb === 'GET' ? schemaDocumentOf(path) : undefined;
      if (document !== undefined) schemaRequests.inc({ cluster, document });
    },
    setQueueDepthSource(depth) {
      depthSource = depth;
    },
    setMemberWatchesSource(count) {
      memberWatchesSource = count;
    },
    ...builds,
    setLeader(leading) {
      leader.set(leading ? 1 : 0);
    },
    countNotification(result) {
      notifications.inc({ result });
    },
  };
}

/** The builds' series: no namespace label, so many namespaces add no series. */
function createBuildMetrics(
  registry: Registry,
): Pick<ControllerMetrics, 'setBuildCountsSource' | 'countBuildsHeldBack'> {
  let buildCounts: () => { readonly queued: number; readonly running: number } = () => ({
    queued: 0,
    running: 0,
  });
  new Gauge({
    name: 'applyset_builds',
    help: "CPU-heavy builds (kustomize), by state: queued (waiting for a slot or its namespace's turn) or running.",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { queued, running } = buildCounts();
      this.set({ state: 'queued' }, queued);
      this.set({ state: 'running' }, running);
    },
  });
  const buildsHeldBack = new Counter({
    name: 'applyset_builds_held_back_total',
    help: "Times a namespace's builds were held back (refused for a growing while) because one ran past its time limit.",
    registers: [registry],
  });
  return {
    setBuildCountsSource(counts) {
      buildCounts = counts;
    },
    countBuildsHeldBack() {
      buildsHeldBack.inc();
    },
  };
}

/**
 * Remote clusters given a `cluster` label of their own. A tenant chooses the server of its kubeconfig,
 * so without a bound every new server would add series for as long as the controller runs; past the
 * bound, requests to servers not seen before count under `other`. 64 is also how many remote
 * connections the controller keeps (remoteClusters).
 */
const MAX_REMOTE_CLUSTER_LABELS = 64;

/**
 * The `cluster` label of a request: `local` for the controller's own API server (no `server`), the
 * remote server's label (remoteClusterLabel) for the first `max` remote servers seen, `other` after.
 * @internal test seam: its unit test runs it with a small bound
 */
export function boundedClusterLabels(max: number): (server: string | undefined) => string {
  const seen = new Set<string>();
  return (server) => {
    if (server === undefined) return 'local';
    const label = remoteClusterLabel(server);
    if (label === undefined) return 'other';
    if (seen.has(label)) return label;
    if (seen.size >= max) return 'other';
    seen.add(label);
    return label;
  };
}

/**
 * A remote server's label: its host and port (the scheme's default port written out), and its path
 * when it has one, because a proxy (Rancher's `/k8s/clusters/<id>`) serves many clusters on one
 * host. Always holds a `:`, so it is never `local` or `other`. Credentials or a query in the URL are
 * left out. Undefined for a server that is not a URL (the kubeconfig was checked before any request,
 * so this is only for totality).
 * @internal test seam: a pure step its unit test runs alone
 */
export function remoteClusterLabel(server: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  const port = url.port !== '' ? url.port : url.protocol === 'http:' ? '80' : '443';
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.hostname}:${port}${path}`;
}

/**
 * `discovery` for `/api`, `/api/<v>`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>` (no resource below them),
 * `openapi` for `/openapi/...`; undefined for any other path.
 * @internal test seam: a pure step its unit test runs alone
 */
export function schemaDocumentOf(path: string): 'discovery' | 'openapi' | undefined {
  if (path === '/openapi' || path.startsWith('/openapi/')) return 'openapi';
  if (/^\/api(\/[^/]+)?\/?$/.test(path) || /^\/apis(\/[^/]+){0,2}\/?$/.test(path)) return 'discovery';
  return undefined;
}

/** What reconciles did: their results and durations, the children they touched, their Git fetches. */
function createRunMetrics(
  registry: Registry,
  perApplySet: ApplySetMetrics,
): Pick<ControllerMetrics, 'observeReconcile' | 'countObjects' | 'observeGitFetch' | 'countUnchanged'> {
  const reconcileDuration = new Histogram({
    name: 'applyset_reconcile_duration_seconds',
    help: 'How long one reconcile of an ApplySet took, by result.',
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const reconciles = new Counter({
    name: 'applyset_reconciles_total',
    help: 'Reconciles of ApplySets, by result.',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const objects = new Counter({
    name: 'applyset_objects_total',
    help: 'Children of ApplySets, by what a reconcile did to them.',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  const gitFetch = new Histogram({
    name: 'applyset_git_fetch_duration_seconds',
    help: 'How long fetching an ApplySet source from Git took, by result.',
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const unchanged = new Counter({
    name: 'applyset_reconciles_unchanged_total',
    help: 'Reconciles that found the ApplySet, its revision and every object it holds as its last run in full left them, and did not read the files or merge them again.',
    registers: [registry],
  });
  return {
    countUnchanged: () => unchanged.inc(),
    observeReconcile(result, seconds, applySet) {
      reconcileDuration.observe({ result }, seconds);
      reconciles.inc({ result });
      // A deleted ApplySet's series were just removed: observing would bring them back.
      if (applySet !== undefined && result !== 'deleted')
        perApplySet.observeApplySetReconcile(applySet.namespace, applySet.name, result, seconds);
    },
    countObjects(action, count, applySet) {
      if (count > 0) objects.inc({ action }, count);
      if (applySet !== undefined)
        perApplySet.countApplySetObjects(applySet.namespace, applySet.name, action, count);
    },
    observeGitFetch(result, seconds) {
      gitFetch.observe({ result }, seconds);
    },
  };
}
