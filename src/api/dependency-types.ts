/**
 * The entries of `spec.dependsOn`: ApplySets, decided by src/api/dependencies.ts, and any other
 * object, decided by src/api/object-dependencies.ts.
 */

/**
 * A resolved ApplySet entry of `spec.dependsOn`: Ready at its current generation before this one is
 * fetched and applied. `namespace` defaults to the ApplySet's own.
 */
export interface DependencyReference {
  readonly name: string;
  readonly namespace?: string;
}

/** An entry of `spec.dependsOn` as stored: with apiVersion and kind, any object (docs/applyset-reference.md). */
export interface DependsOnEntry extends DependencyReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  /** With apiVersion and kind: a CEL expression over the object, true when it is ready (docs/health.md). */
  readonly ready?: string;
}

/** A resolved `spec.dependsOn` entry naming an object other than an ApplySet: Current by kstatus first. */
export interface ObjectDependency {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** Unset: the ApplySet's own; ignored for a cluster-scoped kind. */
  readonly namespace?: string;
  /** A CEL expression over the object, parsed once already; unset: kstatus Current. */
  readonly ready?: string;
}
