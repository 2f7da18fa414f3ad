import type { ObjectHealthJudge } from '../health/cel-health.js';
import type { HookRun, SkippedHook } from './hooks/hook-annotations.js';
import type { ObjectHealthReport, RunOrder, RunStage } from './run-stage.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import type { PruneLimitExceededError } from './prune-limit-error.js';
import type { ManifestSource } from '../manifests/manifest-error.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import type { DriftIgnoreRule } from '../plan/drift-ignore.js';
import type { JsonObject } from '../manifests/json-value.js';

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
  /**
   * A finalizer the parent must hold before any member is written (the controller's, so a deletion
   * waits for the children to be handled). When missing, it is added by the run's first write of the
   * parent, the inventory widen, rather than by a write of its own.
   */
  readonly finalizer?: string;
  /**
   * The parent exactly as the caller just GOT it from the server, not written since: the run takes it
   * instead of reading it again, so a controller reconcile, which reads its ApplySet first anyway,
   * GETs it once. It must be the whole object as served (the inventory annotations, resourceVersion),
   * never a trimmed cache copy such as the informer's: the run plans on its inventory and guards its
   * writes with its resourceVersion (a stale one only turns the first write into a 409). Unset: the
   * run GETs the parent (the command).
   */
  readonly live?: JsonObject;
}

/**
 * One run, grouped by who reads what: the input (loading), what a write may do (each object), what
 * becomes of objects that left the set (the plan and the prune waves), and the wait after the run.
 */
export interface ApplySetRequest {
  readonly input: ApplySetInput;
  readonly write: WritePolicy;
  readonly prune: PruneRequest;
  /**
   * Let the set go instead of applying it (the controller's deletionPolicy Orphan): every object of
   * the inventory that this set owns loses its apply-owner annotation and part-of label, nothing
   * else is touched, so a later set adopts it as an unowned object. The files and `prune` are
   * ignored; readable lines of a damaged inventory are still released. Default false.
   */
  readonly release?: boolean;
  readonly wait?: WaitRequest;
  /**
   * Hooks (docs/hooks.md): objects annotated as hooks are taken out of the set and, when `run`, run
   * in their phases around the apply. Undefined: annotations mean nothing, as for kubectl (the CLI).
   */
  readonly hooks?: HookRequest;
  /**
   * The PreDelete hooks to run before anything is pruned (the controller's finalizer, docs/hooks.md):
   * the hooks of these files (a revision's, not the set's input) run as the other hooks do, and the
   * first that fails ends the run with HookFailedError before anything was deleted.
   */
  readonly preDelete?: PreDeleteRequest;
  /**
   * Sync waves (docs/hooks.md#waves): objects are applied by their `applyset.dev/wave` (or Argo CD's
   * sync-wave), each wave healthy within `timeoutMs` before the next; prunes in reverse. Undefined: the
   * annotation means nothing, as for kubectl (the CLI).
   */
  readonly syncWaves?: { readonly timeoutMs: number; readonly deadline?: number };
  /**
   * Called after each object of the set was applied and each prune candidate handled, with the
   * counts so far and the plan's totals, so the command can draw a progress line on long runs.
   * Called from the engine's queue: it must be quick and must not throw.
   */
  readonly onProgress?: (progress: ApplySetProgress) => void;
  /**
   * How the health of an object is judged wherever the run waits for it (spec.wait, waves, hooks):
   * the controller's CEL health checks (src/health/cel-health.ts); default kstatus's rules.
   */
  readonly healthOf?: ObjectHealthJudge;
  /**
   * Hears each stage a run waits in (a sync wave not healthy yet, one that became healthy, a phase of
   * hooks starting), once per transition. Awaited before the run goes on; it must not throw. Resolves
   * with the parent's resourceVersion when the listener wrote the parent (its status): the engine's
   * next write of the parent is conditional on that version.
   */
  readonly onStage?: (stage: RunStage) => Promise<string | undefined>;
  readonly signal?: AbortSignal;
}

/** What the run applies, and to which parent: read once, while loading. */
export interface ApplySetInput {
  readonly files: readonly ManifestFile[];
  readonly parent: ApplySetParent;
  /** The namespace for namespaced objects that name none (`-n`, or the ApplySet's targetNamespace). */
  readonly defaultNamespace: string;
  /**
   * The namespace was given explicitly (`-n`): an object naming another namespace is refused, as
   * kubectl refuses it. Default false.
   */
  readonly enforceNamespace?: boolean;
  /**
   * Shown every object of the files once they are decoded and validated, before anything is read or
   * written; it throws to refuse the run. The controller refuses ApplySets among an ApplySet's
   * manifests here (refuseNestedApplySets) unless nesting was granted.
   */
  readonly screenObjects?: (objects: readonly ManifestObject[]) => void;
}

/** What a write of an object of the set may do; read by every apply of an object. */
export interface WritePolicy {
  /** Compute everything, write nothing (nor prune, nor wait). */
  readonly dryRun: boolean;
  /**
   * With `dryRun`: ask the API server, as `kubectl diff` does. The create or the three-way-merge patch
   * the real run would send is sent with `dryRun=All`, so the server's validation (a 422), its
   * admission webhooks and ValidatingAdmissionPolicies judge it, and the fields shown are those the
   * server's answer changes (its defaults, a mutating webhook's changes, a Secret's stringData as the
   * data it becomes). Default false: the patch's effect is computed locally and nothing is sent.
   */
  readonly askServer?: boolean;
  /** On an immutable-field error, delete and recreate, as `kubectl apply --force` does. */
  readonly force: boolean;
  /** Take over objects that exist without an apply-owner (kubectl's behaviour). */
  readonly adopt: boolean;
  /**
   * How drift of the live objects is handled. `correct: false` (driftMode Warn on a revision already
   * applied): an update is not sent, its outcome is `unchanged` with the fields it would change as
   * `drift`. `ignore` (spec.driftIgnore): fields others may change, never corrected nor reported.
   * Default: correct everything, as kubectl apply does.
   */
  readonly drift?: { readonly correct: boolean; readonly ignore: readonly DriftIgnoreRule[] };
  /**
   * kubectl's `--field-manager` (default `kubectl-client-side-apply`), sent as the `fieldManager`
   * of every create and patch of an object of the set.
   */
  readonly fieldManager?: string;
  /**
   * kubectl's `--validate`: `strict` (the server refuses unknown or duplicate fields), `warn`, or
   * `ignore`, sent as the `fieldValidation` of every create and patch (default `strict`, as kubectl).
   */
  readonly fieldValidation?: 'strict' | 'warn' | 'ignore';
}

/**
 * What becomes of the objects that left the set. `off`: they stay, and stay in the inventory.
 * `dry-run` (spec.prune: DryRun): judged as a prune would, nothing deleted; each object that would be
 * deleted is reported `would-prune` and stays in the inventory. `delete`: deleted, at most `limit` of
 * them (spec.pruneLimit: a count, or a percentage of the objects the set held; a plan that would
 * delete more writes nothing and throws PruneLimitExceededError). With either, an empty set that held
 * objects is refused unless `allowEmpty`.
 */
export type PruneRequest =
  | { readonly mode: 'off' }
  | { readonly mode: 'dry-run'; readonly allowEmpty: boolean }
  | { readonly mode: 'delete'; readonly allowEmpty: boolean; readonly limit?: PruneLimit };

type PruneLimit = { readonly count: number } | { readonly percent: number };

/**
 * After a complete run, wait until every object applied (and each of `healthChecks`) is Current by
 * kstatus's rules, one has Failed, or `timeoutMs` passes (`--wait`, `spec.wait`).
 */
export interface WaitRequest {
  readonly timeoutMs: number;
  /**
   * When the wait ends at the latest, whatever `timeoutMs` says (ms since the epoch): the controller's
   * run has one spec.timeout for fetch, apply and wait, and a wait that ends first reports the objects
   * not ready, where the run's abort would report only that time ran out.
   */
  readonly deadline?: number;
  readonly pollMs?: number;
  /** Objects outside the set to wait for too (`spec.healthChecks`). */
  readonly healthChecks?: readonly ObjectRef[];
  /** Hears of each object as it becomes Current while waiting. */
  readonly onReady?: (ref: ObjectRef) => void;
  /**
   * After each poll that leaves objects not Current yet, the objects still waited for and the
   * parent's resourceVersion after the run's writes (the controller reads these reports as data to
   * show the wait in its status). Awaited before the next poll; it must not throw.
   */
  readonly onHealthWait?: (wait: HealthWait) => Promise<void>;
}

/** How far a run is: objects of the set applied (whatever the outcome) and prune candidates handled. */
export interface ApplySetProgress {
  readonly applied: number;
  readonly toApply: number;
  readonly pruned: number;
  readonly toPrune: number;
}

/** What happened to one object; the caller turns these into output lines, events, metrics and status. */
export type ObjectOutcome =
  | {
      readonly action: 'created' | 'configured' | 'unchanged' | 'pruned';
      readonly ref: ObjectRef;
      /** What the server warned about while writing it (fieldValidation=Warn, deprecated versions). */
      readonly warnings?: readonly string[];
      /** Applied server-side instead of kubectl's client-side apply, and why (`annotation would be 483 KB`). */
      readonly serverSide?: string;
      /**
       * 'configured' or 'unchanged' only: the object existed without an apply-owner and this set took
       * it over (WritePolicy.adopt). Never silent: callers report every adoption.
       */
      readonly adopted?: true;
      /** 'unchanged' only: drift found and left alone (WritePolicy.drift), the fields it touches. */
      readonly drift?: readonly string[];
      /** 'configured' only: the fields of the live object the write changed. */
      readonly changed?: readonly string[];
    }
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
      /**
       * The set could not judge the object (it could not be read, or it was replaced while being
       * judged): the prune is incomplete, not a deliberate keep. It stays in the inventory.
       */
      readonly incomplete?: boolean;
      /**
       * The live object names another set as its apply-owner (its uid): kept, never deleted by this
       * set. Set apart from other skips because it may be a forged mark, which callers report.
       */
      readonly ownedBy?: string;
    }
  /** Dry run only: what would happen, with a field-level diff for modifications. */
  | {
      readonly action: 'would-create' | 'would-configure' | 'would-prune';
      readonly ref: ObjectRef;
      readonly diff?: readonly string[];
      readonly serverSide?: string;
      /** What the server warned about on the dry run of a server-side apply (deprecated fields). */
      readonly warnings?: readonly string[];
      /** 'would-configure' only: the object has no apply-owner and this set would take it over. */
      readonly adopted?: true;
    };

export interface ApplySetResult {
  readonly outcomes: readonly ObjectOutcome[];
  /** The uid of the apply-config object (the owner every child's apply-owner names). */
  readonly parentUid: string;
  /**
   * The parent's resourceVersion after the run's last write of it (or as read, when nothing was
   * written): the precondition for the caller's own next write of the parent, e.g. its status.
   */
  readonly parentResourceVersion?: string;
  /**
   * What the parent's inventory records after the run: as the run's last inventory write left it, or
   * as read when the run wrote none (a dry run). The controller shows it as status.inventory.
   */
  readonly inventory?: readonly ObjectRef[];
  /** True when every step ran and the hash was written. */
  readonly completed: boolean;
  /**
   * The resourceVersion of each object the run found on the cluster, by `objectRefKey`, as read
   * before any write. The controller keeps them to tell, next time, that nothing has changed since.
   */
  readonly liveVersions?: ReadonlyMap<string, string>;
  /**
   * A dry run whose prunes are over `prune.limit`: the error a real run of the same request stops
   * with before its first write (a real run throws it rather than return).
   */
  readonly pruneLimitExceeded?: PruneLimitExceededError;
  /** With `wait`: the last health of every object waited for. */
  readonly health?: readonly ObjectHealthReport[];
  /** With `wait`: the deadline passed while some object was still in progress. */
  readonly healthTimedOut?: boolean;
  /** With `hooks.run`: how each hook that ran ended, in the order they ran. */
  readonly hooks?: readonly HookRun[];
  /** With `hooks`: how many PreDelete hooks the files hold (run only when the set is deleted). */
  readonly preDeleteHooks?: number;
  /**
   * A dry run of a set with sync waves or hooks: its sync waves in the order they would be applied
   * (more than one), and every hook it declares, none of them run.
   */
  readonly order?: RunOrder;
}

/** The PreDelete hooks of a deletion: the files they are read from, and how long they may take. */
export interface PreDeleteRequest {
  readonly files: readonly ManifestFile[];
  /** How long the phase may take (spec.timeout). */
  readonly timeoutMs: number;
  readonly deadline?: number;
  readonly onHook?: (run: HookRun) => void;
}

/** How a run treats its hooks. */
export interface HookRequest {
  /** Run them: the set applies a new revision or spec. False: leave them out, as on a steady run. */
  readonly run: boolean;
  /** How long each phase may take (spec.timeout). */
  readonly timeoutMs: number;
  /** When the run itself ends (a moment before spec.timeout aborts it): no hook is waited for past it. */
  readonly deadline?: number;
  /** Hears each hook as it ends, and each object annotated as a hook that is not run. */
  readonly onHook?: (run: HookRun) => void;
  readonly onSkipped?: (skipped: SkippedHook) => void;
}

/** What `onHealthWait` hears: the objects still waited for, and the parent's version. */
export interface HealthWait {
  readonly pending: readonly ObjectHealthReport[];
  readonly parentResourceVersion: string | undefined;
}

export type ApplySetEngine = (request: ApplySetRequest) => Promise<ApplySetResult>;
