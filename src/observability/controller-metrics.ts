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
  /**
   * One request sent to the API server (every client of the controller counts here); a GET of a
   * discovery or OpenAPI document is counted by document too.
   */
  countKubeRequest(verb: string, path: string): void;
  /** Sampled at scrape time. */
  setQueueDepthSource(depth: () => number): void;
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
    help: 'Requests the controller sent to the API server, by verb (the Lease and each watch connection included).',
    labelNames: ['verb'] as const,
    registers: [registry],
  });
  const schemaRequests = new Counter({
    name: 'applyset_kube_schema_requests_total',
    help: 'Discovery and OpenAPI documents the controller fetched, for every identity it acts as, by document kind.',
    labelNames: ['document'] as const,
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
  let depthSource: () => number = () => 0;
  new Gauge({
    name: 'applyset_queue_depth',
    help: 'ApplySets due for a reconcile: waiting for a worker or being reconciled.',
    registers: [registry],
    collect() {
      this.set(depthSource());
    },
  });
  return {
    registry,
    ...runs,
    setReady: perApplySet.setReady,
    setRevision: perApplySet.setRevision,
    countDrift: perApplySet.countDrift,
    countFights: perApplySet.countFights,
    countKubeRequest(verb, path) {
      kubeRequests.inc({ verb });
      const document = verb === 'GET' ? schemaDocumentOf(path) : undefined;
      if (document !== undefined) schemaRequests.inc({ document });
    },
    setQueueDepthSource(depth) {
      depthSource = depth;
    },
    setLeader(leading) {
      leader.set(leading ? 1 : 0);
    },
    countNotification(result) {
      notifications.inc({ result });
    },
  };
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
): Pick<ControllerMetrics, 'observeReconcile' | 'countObjects' | 'observeGitFetch'> {
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
  return {
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
