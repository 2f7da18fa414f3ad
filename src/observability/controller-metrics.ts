import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ReconcileResult =
  | 'success'
  | 'stalled'
  | 'retryable'
  | 'waiting'
  | 'suspended'
  | 'deleted'
  | 'error';

export type ObjectAction = 'created' | 'configured' | 'unchanged' | 'pruned' | 'conflict' | 'failed';

export interface ControllerMetrics {
  readonly registry: Registry;
  observeReconcile(result: ReconcileResult, seconds: number): void;
  countObjects(action: ObjectAction, count: number): void;
  observeGitFetch(result: 'success' | 'failure', seconds: number): void;
  /** Ready of one ApplySet: 1 True, 0 False, -1 Unknown; `undefined` forgets it (deleted). */
  setReady(namespace: string, name: string, ready: 1 | 0 | -1 | undefined): void;
  /** Objects of one ApplySet found drifted and left alone (driftMode Warn), on one run. */
  countDrift(namespace: string, name: string, objects: number): void;
  /** Objects of one ApplySet that began a fight (corrected on three runs in a row). */
  countFights(namespace: string, name: string, objects: number): void;
  /**
   * One request sent to the API server (every client of the controller counts here); a GET of a
   * discovery or OpenAPI document is counted by document too.
   */
  countKubeRequest(verb: string, path: string): void;
  /** Sampled at scrape time. */
  setQueueDepthSource(depth: () => number): void;
}

/** The controller's Prometheus metrics, in a registry of their own (no global state). */
export function createControllerMetrics(): ControllerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const runs = createRunMetrics(registry);
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
  const perApplySet = createApplySetMetrics(registry);
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
    ...perApplySet,
    countKubeRequest(verb, path) {
      kubeRequests.inc({ verb });
      const document = verb === 'GET' ? schemaDocumentOf(path) : undefined;
      if (document !== undefined) schemaRequests.inc({ document });
    },
    setQueueDepthSource(depth) {
      depthSource = depth;
    },
  };
}

/**
 * `discovery` for `/api`, `/api/<v>`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>` (no resource below them),
 * `openapi` for `/openapi/...`; undefined for any other path.
 */
export function schemaDocumentOf(path: string): 'discovery' | 'openapi' | undefined {
  if (path === '/openapi' || path.startsWith('/openapi/')) return 'openapi';
  if (/^\/api(\/[^/]+)?\/?$/.test(path) || /^\/apis(\/[^/]+){0,2}\/?$/.test(path)) return 'discovery';
  return undefined;
}

/** What reconciles did: their results and durations, the children they touched, their Git fetches. */
function createRunMetrics(
  registry: Registry,
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
    observeReconcile(result, seconds) {
      reconcileDuration.observe({ result }, seconds);
      reconciles.inc({ result });
    },
    countObjects(action, count) {
      if (count > 0) objects.inc({ action }, count);
    },
    observeGitFetch(result, seconds) {
      gitFetch.observe({ result }, seconds);
    },
  };
}

/** The series labelled by ApplySet: Ready, drift and fights, removed together when it is deleted. */
function createApplySetMetrics(
  registry: Registry,
): Pick<ControllerMetrics, 'setReady' | 'countDrift' | 'countFights'> {
  const ready = new Gauge({
    name: 'applyset_ready',
    help: 'Ready of each ApplySet: 1 True, 0 False, -1 Unknown.',
    labelNames: ['namespace', 'name'] as const,
    registers: [registry],
  });
  const drift = new Counter({
    name: 'applyset_drift_total',
    help: 'Objects found changed on the cluster and not corrected (driftMode Warn), summed over runs, by ApplySet.',
    labelNames: ['namespace', 'name'] as const,
    registers: [registry],
  });
  const fights = new Counter({
    name: 'applyset_fights_total',
    help: 'Fights detected: an object corrected on three runs in a row because someone keeps changing it back, by ApplySet.',
    labelNames: ['namespace', 'name'] as const,
    registers: [registry],
  });
  return {
    setReady(namespace, name, value) {
      if (value === undefined) {
        // A deleted ApplySet's series go with it.
        ready.remove({ namespace, name });
        drift.remove({ namespace, name });
        fights.remove({ namespace, name });
      } else ready.set({ namespace, name }, value);
    },
    countDrift(namespace, name, objects) {
      if (objects > 0) drift.inc({ namespace, name }, objects);
    },
    countFights(namespace, name, objects) {
      if (objects > 0) fights.inc({ namespace, name }, objects);
    },
  };
}
