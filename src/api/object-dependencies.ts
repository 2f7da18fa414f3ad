/**
 * The objects of spec.dependsOn that are not ApplySets, decided as data: which of them another
 * namespace refuses under --no-cross-namespace-refs, and what their reads (as the ApplySet's account)
 * make of the run. Their health is kstatus's (src/health/compute-object-health.ts): an object is
 * awaited until it is Current, unless its entry gives a CEL `ready` expression, which then alone says
 * (src/health/cel-expression.ts). The shell that reads is src/reconcile/check-object-dependencies.ts.
 */
import { compileCelPredicate } from '../health/cel-expression.js';
import { computeObjectHealth, type ObjectHealth } from '../health/compute-object-health.js';
import type { JsonObject } from '../manifests/json-value.js';
import { serviceAccountOf } from './applyset-account.js';
import type { ObjectDependency } from './dependency-types.js';
import type { ReconcileOutcome } from './reconcile-outcome.js';

/** An object dependency as discovery placed it: its resource, and the namespace it is read in ('' if cluster-scoped). */
export interface PlacedObjectDependency {
  readonly dependency: ObjectDependency;
  readonly group: string;
  readonly resource: string;
  readonly namespace: string;
}

/** What reading one object dependency as the account gave. */
export type ObjectDependencyRead =
  | { readonly kind: 'found'; readonly object: JsonObject }
  | { readonly kind: 'missing' }
  | { readonly kind: 'forbidden' }
  /** Discovery does not know its kind (a CRD not installed yet): waited for like a missing object. */
  | { readonly kind: 'unknownKind'; readonly message: string }
  /** An API problem of the moment: retried with backoff. */
  | { readonly kind: 'unreadable'; readonly message: string };

/** `Deployment db/postgres`, or `ClusterRole view` for a cluster-scoped kind. */
function describeObjectDependency(kind: string, namespace: string, name: string): string {
  return namespace === '' ? `${kind} ${name}` : `${kind} ${namespace}/${name}`;
}

/**
 * Refused before anything is read: an object of another namespace, when the controller refuses every
 * reference to another namespace, exactly as an ApplySet dependency is (CrossNamespaceRefRefused).
 */
export function crossNamespaceObjectOutcome(
  placed: readonly PlacedObjectDependency[],
  own: string,
  noCrossNamespaceRefs: boolean,
): ReconcileOutcome | undefined {
  if (!noCrossNamespaceRefs) return undefined;
  const foreign = placed.filter((p) => p.namespace !== '' && p.namespace !== own);
  if (foreign.length === 0) return undefined;
  const names = foreign.map((p) => describe(p)).join(', ');
  return {
    kind: 'stalled',
    reason: 'CrossNamespaceRefRefused',
    message: `spec.dependsOn names ${names} of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied`,
  };
}

export interface ObjectDependencyInput {
  /** Each placed dependency with what its read gave, in the order of spec.dependsOn. */
  readonly reads: readonly { readonly placed: PlacedObjectDependency; readonly read: ObjectDependencyRead }[];
  /** The impersonated user the reads were made as; undefined: the controller itself. */
  readonly user: string | undefined;
  /** There is no watch on an arbitrary object: a waiting run looks again after spec.retryInterval. */
  readonly retryIntervalMs: number;
}

/**
 * Undefined when every object is Current; otherwise the outcome that ends the run before anything is
 * fetched: stalled when the account may not read one (a human must grant it), retryable when one could
 * not be read, else waiting (DependencyNotReady) naming each awaited object with its status.
 */
export function objectDependencyOutcome(input: ObjectDependencyInput): ReconcileOutcome | undefined {
  const forbidden = input.reads.filter(({ read }) => read.kind === 'forbidden').map(({ placed }) => placed);
  if (forbidden.length > 0) return notReadableOutcome(forbidden, input.user);
  const problems: string[] = [];
  let unreadable = false;
  for (const { placed, read } of input.reads) {
    if (read.kind === 'unreadable' || read.kind === 'unknownKind') {
      unreadable ||= read.kind === 'unreadable';
      problems.push(`${describe(placed)} could not be read: ${read.message}`);
      continue;
    }
    const health = objectHealthOf(read.kind === 'found' ? read.object : undefined, placed.dependency.ready);
    if (health.status !== 'Current')
      problems.push(`${describe(placed)} is ${health.status}: ${health.message}`);
  }
  if (problems.length === 0) return undefined;
  const message = `waiting for dependencies: ${problems.join('; ')}`;
  return unreadable
    ? { kind: 'retryable', reason: 'DependencyNotReady', message }
    : { kind: 'waiting', reason: 'DependencyNotReady', message, afterMs: input.retryIntervalMs };
}

/**
 * Whether the object is what the set waits for: its `ready` expression true, else kstatus Current. The
 * message of an object not ready names the expression and what it gave, so the wait says what it awaits.
 */
function objectHealthOf(object: JsonObject | undefined, ready: string | undefined): ObjectHealth {
  if (object === undefined || ready === undefined) return computeObjectHealth(object);
  const predicate = compileCelPredicate(ready);
  // The resolver refused an expression that does not compile; one stored before is said as such.
  if ('error' in predicate) return { status: 'Unknown', message: `ready expression ${predicate.error}` };
  const verdict = predicate.test(object);
  if (verdict.kind === 'error')
    return { status: 'Unknown', message: `ready expression ${ready} failed: ${verdict.message}` };
  return verdict.value
    ? { status: 'Current', message: `ready expression is true: ${ready}` }
    : { status: 'InProgress', message: `ready expression is false: ${ready}` };
}

/** Like SecretNotReadable: who may not read what, and the RBAC that would let it. */
function notReadableOutcome(
  forbidden: readonly PlacedObjectDependency[],
  user: string | undefined,
): ReconcileOutcome {
  const who =
    user === undefined ? 'the controller' : `the ApplySet's ServiceAccount ${serviceAccountOf(user)}`;
  const grants = forbidden.map((p) => {
    const resource = p.group === '' ? p.resource : `${p.resource}.${p.group}`;
    const role =
      p.namespace === '' ? 'a ClusterRole and ClusterRoleBinding' : `a Role in namespace ${p.namespace}`;
    return `${describe(p)}: grant it get on ${resource} (${role} with resourceNames: [${p.dependency.name}])`;
  });
  return {
    kind: 'stalled',
    reason: 'DependencyNotReadable',
    message: `${who} may not read what spec.dependsOn names; ${grants.join('; ')}; nothing was fetched or applied`,
  };
}

function describe(placed: PlacedObjectDependency): string {
  return describeObjectDependency(placed.dependency.kind, placed.namespace, placed.dependency.name);
}
