import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import type { ManifestSource } from '../manifests/manifest-error.js';
import type { ObjectRef } from '../manifests/object-ref.js';

/**
 * The contract between the apply-and-prune engine and its two callers: the `applyset apply` command
 * (parent = a ConfigMap) and the controller (parent = the ApplySet resource itself).
 */
export interface ApplySetParent {
  /** e.g. '' for ConfigMap, 'applyset.dev' for ApplySet. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The plural resource name, e.g. 'configmaps' or 'applysets'. */
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  /** Create the parent when it is absent (the command's ConfigMap); the controller's ApplySet always exists. */
  readonly createIfMissing: boolean;
}

export interface ApplySetRequest {
  readonly files: readonly ManifestFile[];
  readonly parent: ApplySetParent;
  /** The namespace for namespaced objects that name none (`-n`, or the ApplySet's targetNamespace). */
  readonly defaultNamespace: string;
  /**
   * The namespace was given explicitly (`-n`): an object naming another namespace is refused, as
   * kubectl refuses it. Default false.
   */
  readonly enforceNamespace?: boolean;
  readonly prune: boolean;
  readonly allowEmpty: boolean;
  /** On an immutable-field error, delete and recreate, as `kubectl apply --force` does. */
  readonly force: boolean;
  /** Take over objects that exist without an apply-owner (kubectl's behaviour); default true. */
  readonly adopt: boolean;
  /** Compute everything, write nothing. */
  readonly dryRun: boolean;
  readonly signal?: AbortSignal;
}

/** What happened to one object; the caller turns these into output lines, events, metrics and status. */
export type ObjectOutcome =
  | { readonly action: 'created' | 'configured' | 'unchanged' | 'pruned'; readonly ref: ObjectRef }
  | {
      readonly action: 'conflict';
      readonly ref: ObjectRef;
      readonly message: string;
      /** The file and document the object came from, for messages. */
      readonly source?: ManifestSource;
    }
  | {
      readonly action: 'failed';
      readonly ref: ObjectRef;
      readonly message: string;
      readonly cause?: unknown;
      /** The file and document, for objects of the set (not for prunes). */
      readonly source?: ManifestSource;
    }
  | {
      readonly action: 'prune-skipped';
      readonly ref: ObjectRef;
      readonly reason: string;
      /**
       * The set gave the object up instead of deleting it (a Namespace or CRD holding objects of
       * others): its apply-owner and part-of metadata were removed and it leaves the inventory.
       */
      readonly released?: boolean;
    }
  /** Dry run only: what would happen, with a field-level diff for modifications. */
  | {
      readonly action: 'would-create' | 'would-configure' | 'would-prune';
      readonly ref: ObjectRef;
      readonly diff?: readonly string[];
    };

export interface ApplySetResult {
  readonly outcomes: readonly ObjectOutcome[];
  /** The uid of the apply-config object (the owner every child's apply-owner names). */
  readonly parentUid: string;
  /** True when every step ran and the hash was written. */
  readonly completed: boolean;
}

/**
 * Thrown (never partially applied) when the input is bad: invalid YAML, missing fields, duplicates,
 * unknown kinds, a refused plan (empty set). `intent` is 'stalled': retrying cannot help.
 */
export interface ApplySetInputError extends Error {
  readonly intent: 'stalled';
  /** One line per problem, each naming file, document and object. */
  readonly problems: readonly string[];
}

export type ApplySetEngine = (request: ApplySetRequest) => Promise<ApplySetResult>;
