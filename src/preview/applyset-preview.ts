/**
 * What a preview of an ApplySet is, as data: the web view renders it as a page, `applyset diff
 * --applyset-object` as text or as a pull-request comment (docs/commands.md#preview-an-applyset).
 */
import type { DependencyWait } from '../api/dependencies.js';
import type { ObjectRef } from '../manifests/object-ref.js';

/** Where the manifests previewed come from. */
export type PreviewSource =
  /** The ApplySet's own `spec.source.ref`, fetched as the controller fetches it. */
  | { readonly kind: 'applyset-ref' }
  /** Another ref of the ApplySet's repository: a branch, `refs/tags/NAME`, or a 40-digit commit. */
  | { readonly kind: 'ref'; readonly ref: string }
  /** A checkout of the repository: `spec.source.path` is read below this directory. */
  | { readonly kind: 'local'; readonly directory: string };

/** What was previewed: a revision of the repository, or a local directory. */
export type PreviewedRevision =
  | { readonly kind: 'git'; readonly revision: string; readonly commit: string }
  | { readonly kind: 'local'; readonly directory: string };

/**
 * One object the run would touch, or could not. The field changes are lines `path: before → after`
 * (the values of a Secret's data and stringData shown as `*** (before)` and `*** (after)`).
 */
export type PreviewEntry =
  | { readonly kind: 'create'; readonly ref: ObjectRef; readonly serverSide?: string }
  | {
      readonly kind: 'configure';
      readonly ref: ObjectRef;
      readonly changes: readonly string[];
      readonly serverSide?: string;
    }
  /** An object without an apply-owner this set would take over (spec.adopt), changed or not. */
  | { readonly kind: 'adopt'; readonly ref: ObjectRef; readonly changes: readonly string[] }
  /** An object that left the set and would be deleted. */
  | { readonly kind: 'prune'; readonly ref: ObjectRef }
  /** An object that left the set and would stay: why (spec.prune, spec.pruneLimit, not this set's…). */
  | { readonly kind: 'held-back'; readonly ref: ObjectRef; readonly reason: string }
  /**
   * driftMode Warn on a revision already applied: the object was changed on the cluster, and the run
   * would only report it (status.drift, the Drifted condition), not change it back. `fields` as the
   * controller names them.
   */
  | { readonly kind: 'drift'; readonly ref: ObjectRef; readonly fields: readonly string[] }
  /** An object or file the run would fail on. */
  | {
      readonly kind: 'error';
      readonly ref?: ObjectRef;
      readonly file?: string;
      readonly message: string;
    };

/** Why the controller's run would stop before applying anything (a stall, a refusal). */
export interface PreviewStop {
  /** The condition reason the ApplySet would show, e.g. `PruneLimitExceeded` or `SecretNotReadable`. */
  readonly reason: string;
  readonly message: string;
}

/**
 * Why the controller would apply nothing now, though the revision was read and previewed all the same:
 * the entries say what it would do once the hold is gone.
 */
export type PreviewHold =
  /** spec.suspend: no fetch, no write, until the ApplySet is resumed. */
  | { readonly kind: 'suspended' }
  /**
   * spec.dependsOn: the run waits (DependencyNotReady) for the dependencies in `waitingFor`, or stalls
   * on a cycle or a refused reference; `reason` and `message` are what its Ready condition would say.
   */
  | {
      readonly kind: 'dependencies';
      readonly reason: string;
      readonly message: string;
      readonly waitingFor: readonly DependencyWait[];
    };

/** The Drifted condition the run would write, when it finds drift it leaves alone (driftMode Warn). */
export interface PreviewDriftReport {
  readonly reason: string;
  readonly message: string;
}

/** A hook the run would run (docs/hooks.md), as its annotations say: the preview runs none. */
export interface PreviewHook {
  readonly ref: ObjectRef;
  readonly phases: readonly string[];
  /** Lower weights run first. */
  readonly weight: number;
  /** When its object is deleted after it ran (HookSucceeded, HookFailed); none: it stays until the next run. */
  readonly deletePolicies: readonly string[];
}

/** The order of a set with sync waves or hooks: its waves in apply order, and its hooks. */
export interface PreviewOrder {
  /** More than one wave, else empty: each is healthy before the next is applied. */
  readonly syncWaves: readonly { readonly wave: number; readonly refs: readonly ObjectRef[] }[];
  readonly hooks: readonly PreviewHook[];
}

export interface ApplySetPreview {
  readonly applySet: { readonly namespace: string; readonly name: string };
  readonly previewed: PreviewedRevision;
  /** The identity the run was computed as, as the controller would apply it. */
  readonly identity: { readonly serviceAccount: string; readonly user: string };
  readonly entries: readonly PreviewEntry[];
  /** Objects of the set the run would leave as they are. */
  readonly unchanged: number;
  /** Objects outside the set the run would wait for (spec.healthChecks, with spec.wait). */
  readonly waitsFor: readonly ObjectRef[];
  /** What keeps the controller from applying now, in the order it checks them (suspension first). */
  readonly holds?: readonly PreviewHold[];
  /** Set when the set has sync waves or hooks: the entries are listed by wave, the hooks named. */
  readonly order?: PreviewOrder;
  /** Set when the run would find drift and only report it. */
  readonly drifted?: PreviewDriftReport;
  /** Set when the run would stop; the entries then say what the revision holds, not what is written. */
  readonly stopped?: PreviewStop;
  /**
   * Set when the preview could not be computed: it stopped (`stopped` says why) before the engine's
   * dry run said what the run would write (the kustomize binary missing, a source host not allowed,
   * the account missing, refused manifests). There is nothing to count then: the entries are only the
   * problems found, and a preview that failed never reads as one where nothing would change.
   */
  readonly failed?: true;
}
