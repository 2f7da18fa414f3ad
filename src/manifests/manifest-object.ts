import type { JsonObject } from './json-value.js';
import type { ManifestSource } from './manifest-error.js';
import type { ObjectRef } from './object-ref.js';
import type { Scope } from './scope-resolver.js';

/** One validated object of the set, ready to be applied. */
export interface ManifestObject {
  readonly ref: ObjectRef;
  readonly apiVersion: string;
  readonly version: string;
  readonly scope: Scope;
  /**
   * The object exactly as the file says, plus `metadata.namespace` when it was defaulted, which is
   * what kubectl stores in the last-applied annotation. Never mutated.
   */
  readonly manifest: JsonObject;
  readonly source: ManifestSource;
  /**
   * A hook named by `metadata.generateName` (only when the run splits hooks out): `ref.name` is the
   * prefix, and the API server picks the name when the hook is created.
   */
  readonly generateName?: true;
}
