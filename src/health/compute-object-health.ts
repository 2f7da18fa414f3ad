import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';

/**
 * kstatus's vocabulary (sigs.k8s.io/cli-utils/pkg/kstatus): Current (the object has reached what its
 * spec asks), InProgress (it is getting there), Failed (it will not get there without a change),
 * Terminating (it is being deleted), NotFound (it does not exist), Unknown (its health could not be
 * judged: a CEL health expression that failed on it, src/health/cel-health.ts).
 */
type HealthStatus = 'Current' | 'InProgress' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';

export interface ObjectHealth {
  readonly status: HealthStatus;
  /** For a person: `1 of 3 replicas available`, `Job has failed: BackoffLimitExceeded`. */
  readonly message: string;
}

const current = (message = 'Resource is current'): ObjectHealth => ({ status: 'Current', message });
const inProgress = (message: string): ObjectHealth => ({ status: 'InProgress', message });
const failed = (message: string): ObjectHealth => ({ status: 'Failed', message });

/**
 * The health of one live object by kstatus's rules: first what holds for every kind (deletion under
 * way, a status that has not seen the latest generation, the standard `Reconciling`/`Stalled`/`Ready`
 * conditions), then the rules of the built-in kinds whose status says more (workloads, Jobs, Pods,
 * claims, load balancers, CRDs, Namespaces). An object without a status is Current at once.
 */
export function computeObjectHealth(object: JsonObject | undefined): ObjectHealth {
  if (object === undefined) return { status: 'NotFound', message: 'the object does not exist' };
  const early = lifecycleHealth(object);
  if (early !== undefined) return early;
  const status = objectAt(object, 'status');
  const group = String(object['apiVersion'] ?? '')
    .split('/')
    .slice(0, -1)
    .join('/');
  const specific = kindRules[`${group}/${String(object['kind'] ?? '')}`];
  if (specific !== undefined) return specific(object, status);
  return genericHealth(status);
}

/**
 * What holds for every kind before its own rules (or its CEL health check) are asked: a deletion under
 * way, or a status that has not observed the latest generation. Undefined: neither.
 */
export function lifecycleHealth(object: JsonObject): ObjectHealth | undefined {
  const metadata = objectAt(object, 'metadata');
  if (metadata['deletionTimestamp'] !== undefined) {
    return { status: 'Terminating', message: 'the object is being deleted' };
  }
  const generation = numberAt(metadata, 'generation');
  const observed = numberAt(objectAt(object, 'status'), 'observedGeneration');
  if (generation !== undefined && observed !== undefined && observed < generation) {
    return inProgress(`generation ${generation} is not observed yet (observed ${observed})`);
  }
  return undefined;
}

/** The standard conditions any kind may publish (kstatus's "generic" rules). */
function genericHealth(status: JsonObject): ObjectHealth {
  const reconciling = condition(status, 'Reconciling');
  if (reconciling?.status === 'True') return inProgress(reconciling.message || 'Reconciling');
  const stalled = condition(status, 'Stalled');
  if (stalled?.status === 'True') return failed(stalled.message || 'Stalled');
  const ready = condition(status, 'Ready');
  if (ready !== undefined && ready.status !== 'True') {
    return inProgress(ready.message || `Ready is ${ready.status}`);
  }
  return current();
}

type KindRule = (object: JsonObject, status: JsonObject) => ObjectHealth;

const kindRules: Readonly<Record<string, KindRule>> = {
  'apps/Deployment': deploymentHealth,
  'apps/StatefulSet': statefulSetHealth,
  'apps/DaemonSet': daemonSetHealth,
  'apps/ReplicaSet': replicaSetHealth,
  'batch/Job': jobHealth,
  '/Pod': podHealth,
  '/PersistentVolumeClaim': (_object, status) =>
    status['phase'] === 'Bound'
      ? current()
      : inProgress(`PVC is not Bound (phase ${String(status['phase'] ?? 'none')})`),
  '/Service': serviceHealth,
  '/Namespace': (_object, status) =>
    status['phase'] === 'Terminating'
      ? { status: 'Terminating', message: 'the Namespace is terminating' }
      : current(),
  'apiextensions.k8s.io/CustomResourceDefinition': crdHealth,
};

function deploymentHealth(object: JsonObject, status: JsonObject): ObjectHealth {
  const spec = objectAt(object, 'spec');
  const wanted = numberAt(spec, 'replicas') ?? 1;
  const progressing = condition(status, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return failed(`progress deadline exceeded: ${progressing.message}`.trim());
  }
  if (numberAt(status, 'observedGeneration') === undefined)
    return inProgress('the Deployment has no status yet');
  const updated = numberAt(status, 'updatedReplicas') ?? 0;
  const total = numberAt(status, 'replicas') ?? 0;
  const available = numberAt(status, 'availableReplicas') ?? 0;
  const ready = numberAt(status, 'readyReplicas') ?? 0;
  if (updated < wanted) return inProgress(`${updated} of ${wanted} replicas updated`);
  if (total > updated) return inProgress(`${total - updated} old replicas are pending termination`);
  if (available < wanted) return inProgress(`${available} of ${wanted} replicas available`);
  if (ready < wanted) return inProgress(`${ready} of ${wanted} replicas ready`);
  const availableCondition = condition(status, 'Available');
  if (availableCondition !== undefined && availableCondition.status !== 'True') {
    return inProgress('the Deployment is not Available');
  }
  return current(`${wanted} of ${wanted} replicas available`);
}

function statefulSetHealth(object: JsonObject, status: JsonObject): ObjectHealth {
  const spec = objectAt(object, 'spec');
  const wanted = numberAt(spec, 'replicas') ?? 1;
  if (numberAt(status, 'observedGeneration') === undefined)
    return inProgress('the StatefulSet has no status yet');
  const strategy = objectAt(spec, 'updateStrategy')['type'];
  const ready = numberAt(status, 'readyReplicas') ?? 0;
  const replicas = numberAt(status, 'replicas') ?? 0;
  if (replicas < wanted) return inProgress(`${replicas} of ${wanted} replicas created`);
  if (ready < wanted) return inProgress(`${ready} of ${wanted} replicas ready`);
  if (strategy === 'OnDelete') return current();
  const partition = numberAt(objectAt(objectAt(spec, 'updateStrategy'), 'rollingUpdate'), 'partition') ?? 0;
  const updated = numberAt(status, 'updatedReplicas') ?? 0;
  if (partition > 0) {
    return updated < wanted - partition
      ? inProgress(`${updated} of ${wanted - partition} replicas above the partition updated`)
      : current();
  }
  if (status['updateRevision'] !== undefined && status['currentRevision'] !== status['updateRevision']) {
    return inProgress(`${updated} of ${wanted} replicas at the update revision`);
  }
  return current(`${ready} of ${wanted} replicas ready`);
}

function daemonSetHealth(_object: JsonObject, status: JsonObject): ObjectHealth {
  if (numberAt(status, 'observedGeneration') === undefined)
    return inProgress('the DaemonSet has no status yet');
  const desired = numberAt(status, 'desiredNumberScheduled') ?? 0;
  const scheduled = numberAt(status, 'currentNumberScheduled') ?? 0;
  const updated = numberAt(status, 'updatedNumberScheduled') ?? 0;
  const available = numberAt(status, 'numberAvailable') ?? 0;
  const ready = numberAt(status, 'numberReady') ?? 0;
  if (scheduled < desired) return inProgress(`${scheduled} of ${desired} pods scheduled`);
  if (updated < desired) return inProgress(`${updated} of ${desired} pods updated`);
  if (available < desired) return inProgress(`${available} of ${desired} pods available`);
  if (ready < desired) return inProgress(`${ready} of ${desired} pods ready`);
  return current(`${ready} of ${desired} pods ready`);
}

function replicaSetHealth(object: JsonObject, status: JsonObject): ObjectHealth {
  const wanted = numberAt(objectAt(object, 'spec'), 'replicas') ?? 1;
  const failure = condition(status, 'ReplicaFailure');
  if (failure?.status === 'True') return inProgress(`replica failure: ${failure.message}`.trim());
  const available = numberAt(status, 'availableReplicas') ?? 0;
  const ready = numberAt(status, 'readyReplicas') ?? 0;
  if (available < wanted) return inProgress(`${available} of ${wanted} replicas available`);
  if (ready < wanted) return inProgress(`${ready} of ${wanted} replicas ready`);
  return current();
}

function jobHealth(_object: JsonObject, status: JsonObject): ObjectHealth {
  const failedCondition = condition(status, 'Failed');
  if (failedCondition?.status === 'True') {
    return failed(`Job has failed: ${failedCondition.reason || failedCondition.message}`.trim());
  }
  const complete = condition(status, 'Complete');
  if (complete?.status === 'True') return current('Job completed');
  return inProgress(
    `Job in progress: ${numberAt(status, 'succeeded') ?? 0} succeeded, ${numberAt(status, 'active') ?? 0} active`,
  );
}

function podHealth(_object: JsonObject, status: JsonObject): ObjectHealth {
  switch (status['phase']) {
    case 'Succeeded':
      return current('Pod has completed');
    case 'Failed':
      return failed(`Pod has failed: ${String(status['reason'] ?? status['message'] ?? '')}`.trim());
    case 'Running': {
      const ready = condition(status, 'Ready');
      return ready?.status === 'True' ? current('Pod is Ready') : inProgress('Pod is running but not Ready');
    }
    default:
      return inProgress(`Pod is ${String(status['phase'] ?? 'Pending')}`);
  }
}

function serviceHealth(object: JsonObject, status: JsonObject): ObjectHealth {
  if (objectAt(object, 'spec')['type'] !== 'LoadBalancer') return current();
  const ingress = objectAt(status, 'loadBalancer')['ingress'];
  return Array.isArray(ingress) && ingress.length > 0
    ? current('the load balancer has an address')
    : inProgress('waiting for the load balancer to get an address');
}

function crdHealth(_object: JsonObject, status: JsonObject): ObjectHealth {
  const names = condition(status, 'NamesAccepted');
  if (names?.status === 'False') return failed(`names not accepted: ${names.message}`.trim());
  const established = condition(status, 'Established');
  return established?.status === 'True'
    ? current('CRD is Established')
    : inProgress('CRD is not Established yet');
}

interface Condition {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

function condition(status: JsonObject, type: string): Condition | undefined {
  const conditions = status['conditions'];
  if (!Array.isArray(conditions)) return undefined;
  const found = conditions.find((c): c is JsonObject => isJsonObject(c) && c['type'] === type);
  if (found === undefined) return undefined;
  return {
    status: String(found['status'] ?? 'Unknown'),
    reason: String(found['reason'] ?? ''),
    message: String(found['message'] ?? ''),
  };
}

function objectAt(object: JsonObject, key: string): JsonObject {
  const value: JsonValue | undefined = object[key];
  return isJsonObject(value) ? value : {};
}

function numberAt(object: JsonObject, key: string): number | undefined {
  const value = object[key];
  return typeof value === 'number' ? value : undefined;
}
