/**
 * spec.dependsOn decided as data: whether a dependency is Ready at its current generation, and if
 * not why; which ApplySets name a given one (so a change of its status wakes them); and what a
 * reconcile does before anything is fetched: refuse another namespace under
 * --no-cross-namespace-refs, stall on a cycle, wait for dependencies not ready. The controller reads
 * the ApplySets (src/controller/check-dependencies.ts); everything it decides is here.
 */

import { APPLYSET_API_VERSION, APPLYSET_KIND, type ApplySet } from './applyset-types.js';
import type { DependencyReference } from './dependency-types.js';
import type { ReconcileOutcome } from './reconcile-outcome.js';

/** `namespace/name`, as the work queue keys ApplySets. */
export function dependencyKey(reference: DependencyReference, ownNamespace: string): string {
  return `${reference.namespace ?? ownNamespace}/${reference.name}`;
}

/**
 * The keys of the ApplySets an ApplySet's spec.dependsOn names, read leniently: the informer's objects
 * are as stored, and an entry without a string name names nothing (resolving the spec reports it). An
 * entry with another apiVersion or kind names an object, not an ApplySet: no status change wakes on it.
 */
export function dependencyKeysOf(applySet: Pick<ApplySet, 'metadata' | 'spec'>): string[] {
  const raw: unknown = applySet.spec?.dependsOn;
  if (!Array.isArray(raw)) return [];
  return raw
    .filter(
      (entry): entry is DependencyReference =>
        typeof entry === 'object' && entry !== null && typeof entry.name === 'string' && namesApplySet(entry),
    )
    .map((entry) =>
      dependencyKey(
        typeof entry.namespace === 'string' ? entry : { name: entry.name },
        applySet.metadata.namespace,
      ),
    );
}

/** Neither apiVersion nor kind, or the ApplySet's own: as src/api/resolve-depends-on.ts reads it. */
function namesApplySet(entry: { readonly apiVersion?: unknown; readonly kind?: unknown }): boolean {
  if (entry.apiVersion === undefined && entry.kind === undefined) return true;
  return entry.apiVersion === APPLYSET_API_VERSION && entry.kind === APPLYSET_KIND;
}

/**
 * Why a dependency is not Ready at its current generation, or undefined when it is. A suspended
 * ApplySet counts when its Ready is True at its generation; suspending changes the generation, so one
 * suspended since its last reconcile is reported as not observed.
 */
export function readinessProblem(dependency: ApplySet | undefined): string | undefined {
  if (dependency === undefined) return 'not found';
  if (dependency.metadata.deletionTimestamp !== undefined) return 'being deleted';
  const { generation } = dependency.metadata;
  const ready = dependency.status?.conditions?.find((c) => c.type === 'Ready');
  const observed = ready?.observedGeneration ?? dependency.status?.observedGeneration;
  if (generation !== undefined && observed !== generation) {
    const suspended = dependency.spec?.suspend === true ? 'suspended, ' : '';
    return `${suspended}generation ${generation} not yet observed`;
  }
  if (ready === undefined) return 'no Ready condition yet';
  if (ready.status !== 'True') return `Ready=${ready.status} (${ready.reason})`;
  return undefined;
}

/** An ApplySet as the dependency check read it: found, absent, or unreadable (with why). */
export type DependencyRead =
  | { readonly kind: 'found'; readonly applySet: ApplySet }
  | { readonly kind: 'missing' }
  | { readonly kind: 'unreadable'; readonly message: string };

export interface DependencyCheckInput {
  readonly applySet: Pick<ApplySet, 'metadata'>;
  /** The resolved spec.dependsOn, in order. */
  readonly dependsOn: readonly DependencyReference[];
  /** A dependency of another namespace is refused (the default, unless `--allow-cross-namespace-refs`). */
  readonly noCrossNamespaceRefs: boolean;
  /** Every ApplySet the check read, by key: the dependencies and, for the cycle, theirs in turn. */
  readonly reads: ReadonlyMap<string, DependencyRead>;
  /** How long to wait before looking again without a watch event (the ApplySet's interval). */
  readonly safetyRequeueMs: number;
}

/**
 * What spec.dependsOn makes of this reconcile before anything is fetched: undefined to go on, or an
 * outcome that ends it (a refusal, a cycle, dependencies not ready). Nothing is applied in each case.
 */
export function dependencyOutcome(input: DependencyCheckInput): ReconcileOutcome | undefined {
  const { namespace, name } = input.applySet.metadata;
  const keys = input.dependsOn.map((reference) => dependencyKey(reference, namespace));
  if (keys.length === 0) return undefined;
  const foreign = input.dependsOn.filter((r) => r.namespace !== undefined && r.namespace !== namespace);
  if (input.noCrossNamespaceRefs && foreign.length > 0) {
    const names = foreign.map((r) => dependencyKey(r, namespace)).join(', ');
    return {
      kind: 'stalled',
      reason: 'CrossNamespaceRefRefused',
      message: `spec.dependsOn names ApplySet ${names} of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied`,
    };
  }
  const self = `${namespace}/${name}`;
  const cycle = findDependencyCycle(self, (key) => {
    if (key === self) return keys;
    const read = input.reads.get(key);
    return read?.kind === 'found' ? dependencyKeysOf(read.applySet) : [];
  });
  if (cycle !== undefined) {
    return {
      kind: 'stalled',
      reason: 'DependencyCycle',
      message: `spec.dependsOn makes a cycle: ${cycle.join(' -> ')}; nothing was fetched or applied`,
    };
  }
  return notReadyOutcome(keys, input);
}

/** A dependency the run would wait for: which, why, and the Ready condition it shows, if any. */
export interface DependencyWait {
  readonly namespace: string;
  readonly name: string;
  /** What readinessProblem says (`Ready=False (HealthCheckFailed)`, `not found`), or why it could not be read. */
  readonly problem: string;
  /** Its Ready condition's status and reason as read; unset when it has none or was not read. */
  readonly ready?: { readonly status: string; readonly reason: string };
  /** It could not be read: an API problem of the moment, not its own state. */
  readonly unreadable: boolean;
}

/** The dependencies of `keys` not Ready at their generation, in order, each once. */
export function notReadyDependencies(
  keys: readonly string[],
  reads: ReadonlyMap<string, DependencyRead>,
): DependencyWait[] {
  const waits: DependencyWait[] = [];
  for (const key of new Set(keys)) {
    const [namespace = '', name = ''] = key.split('/');
    const read = reads.get(key);
    if (read === undefined || read.kind === 'unreadable') {
      const why = read?.kind === 'unreadable' ? read.message : 'not read';
      waits.push({ namespace, name, problem: `could not be read: ${why}`, unreadable: true });
      continue;
    }
    const dependency = read.kind === 'found' ? read.applySet : undefined;
    const problem = readinessProblem(dependency);
    if (problem === undefined) continue;
    const ready = dependency?.status?.conditions?.find((c) => c.type === 'Ready');
    waits.push({
      namespace,
      name,
      problem,
      ...(ready === undefined ? {} : { ready: { status: ready.status, reason: ready.reason } }),
      unreadable: false,
    });
  }
  return waits;
}

/** Waiting while some dependency is not Ready at its generation; retried soon when one was unreadable. */
function notReadyOutcome(keys: readonly string[], input: DependencyCheckInput): ReconcileOutcome | undefined {
  const waits = notReadyDependencies(keys, input.reads);
  if (waits.length === 0) return undefined;
  const problems = waits.map((wait) => `${wait.namespace}/${wait.name}: ${wait.problem}`);
  const message = `waiting for dependencies: ${problems.join('; ')}`;
  // A dependency that could not be read is an API problem of the moment: back off and try again.
  // Otherwise the dependency's own status change wakes this ApplySet; the interval is only a safety net.
  return waits.some((wait) => wait.unreadable)
    ? { kind: 'retryable', reason: 'DependencyNotReady', message }
    : { kind: 'waiting', reason: 'DependencyNotReady', message, afterMs: input.safetyRequeueMs };
}

/**
 * A set that waits, through its dependencies, for itself would wait forever, so the reconcile reports
 * the cycle instead (DependencyCycle). The shortest cycle through `start`, as the keys in order from `start` back to it
 * (`[a, b, a]`; `[a, a]` for an ApplySet naming itself), or undefined when there is none. Breadth
 * first over `dependsOn`, in the order each lists its dependencies, so the answer is the same on every
 * run. Cycles that do not pass through `start` are not its own: its dependency reports them.
 * @internal A pure step the cycle tests exercise alone.
 */
export function findDependencyCycle(
  start: string,
  dependsOn: (key: string) => readonly string[],
): string[] | undefined {
  const cameFrom = new Map<string, string>();
  const queue: string[] = [start];
  for (let next = 0; next < queue.length; next += 1) {
    const key = queue[next] as string;
    for (const dependency of dependsOn(key)) {
      if (dependency === start) return [...pathTo(key, start, cameFrom), start];
      if (cameFrom.has(dependency)) continue;
      cameFrom.set(dependency, key);
      queue.push(dependency);
    }
  }
  return undefined;
}

/** The path from `start` to `key` that the search took. */
function pathTo(key: string, start: string, cameFrom: ReadonlyMap<string, string>): string[] {
  const path = [key];
  for (let at = key; at !== start; ) {
    at = cameFrom.get(at) as string;
    path.unshift(at);
  }
  return path;
}
