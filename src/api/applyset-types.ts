import type { HealthCheckExpr } from '../health/cel-health.js';
/**
 * The ApplySet custom resource as the controller sees it: its names on the API and the shape of its spec
 * and status exactly as crds/applyset.dev_applysets.yaml declares them, plus the resolved spec a
 * reconcile works from. resolveApplySetSpec (resolve-applyset-spec.ts) turns the one into the other.
 */

import type { DriftIgnoreRule } from '../plan/drift-ignore.js';
import type { HelmValuesReference, ResolvedValuesReference } from './helm-values-reference.js';
import type { DriftMode, PRUNE_DRY_RUN } from './safe-mode-spec.js';
import type { ResolvedSourceConnection, SourceConnectionSpec } from './source-connection-spec.js';
import type { DependencyReference, DependsOnEntry, ObjectDependency } from './dependency-types.js';

export const APPLYSET_GROUP = 'applyset.dev';
export const APPLYSET_VERSION = 'v1alpha1';
export const APPLYSET_API_VERSION = `${APPLYSET_GROUP}/${APPLYSET_VERSION}`;
export const APPLYSET_KIND = 'ApplySet';
/** @internal The CRD test holds crds/ to it. */
export const APPLYSET_LIST_KIND = 'ApplySetList';
export const APPLYSET_PLURAL = 'applysets';
/** @internal The CRD test holds crds/ to it. */
export const APPLYSET_SINGULAR = 'applyset';
/** @internal The CRD test holds crds/ to it. */
export const APPLYSET_CRD_NAME = `${APPLYSET_PLURAL}.${APPLYSET_GROUP}`;

/** Held while the children may still need pruning (deletionPolicy Delete). */
export const APPLYSET_FINALIZER = 'applyset.dev/finalizer';
/** Setting this annotation to a new value asks for a reconcile now; status echoes it when handled. */
export const RECONCILE_REQUESTED_AT_ANNOTATION = 'applyset.dev/reconcile-requested-at';
/** Its value, a revision, lets a run of that revision prune past spec.pruneLimit. */
export const APPROVE_PRUNE_ANNOTATION = 'applyset.dev/approve-prune';
/** `"true"` on a deleted ApplySet: its objects are deleted without running its PreDelete hooks. */
export const SKIP_PRE_DELETE_HOOKS_ANNOTATION = 'applyset.dev/skip-pre-delete-hooks';

/** The CRD's `maxItems` of status.errors.items; the rest is only counted. */
export const MAX_STATUS_ERRORS = 20;

export const DEFAULT_INTERVAL_MS = 5 * 60_000;
/** retryInterval, when unset, is the smaller of interval and this. */
export const DEFAULT_MAX_RETRY_INTERVAL_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 2 * 60_000;

export const DELETION_POLICIES = ['Delete', 'Orphan'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

interface GitRefSpec {
  readonly branch?: string;
  readonly tag?: string;
  readonly commit?: string;
  /**
   * A semver range (`>=1.0.0 <2.0.0`): the highest tag of an OCI repository satisfying it. Only with an
   * `oci://` URL.
   */
  readonly semver?: string;
  /** An OCI artifact's manifest digest (`sha256:…`): only with an `oci://` URL. */
  readonly digest?: string;
}

interface ApplySetSourceSpec extends SourceConnectionSpec {
  /** A Git or OCI repository; with spec.helm.chart, a chart repository (`https://…`, `oci://…`). */
  readonly url: string;
  /** Required, but for a chart of spec.helm.chart (its version is spec.helm.version). */
  readonly ref?: GitRefSpec;
  /** An `oci://` source over plain HTTP (a registry without TLS, as Flux's `insecure`). */
  readonly insecure?: boolean;
  /** An `oci://` artifact's cosign signature, checked before anything of it is read. */
  readonly verify?: { readonly provider: 'cosign'; readonly secretRef?: { readonly name: string } };
  readonly path?: string;
  /** Files to leave out, .gitignore format, one pattern a line, paths from the repository root. */
  readonly ignore?: string;
  readonly secretRef?: SecretReference;
}

/**
 * `spec.source.secretRef`. `namespace` defaults to the ApplySet's own; another is refused unless the
 * controller runs with `--allow-secret-refs-from` naming it (and without `--no-cross-namespace-refs`).
 */
interface SecretReference {
  readonly name: string;
  readonly namespace?: string;
}

/** `spec.decryption`, Flux's shape: the Secret is always of the ApplySet's own namespace. */
interface DecryptionSpec {
  readonly provider: 'sops';
  readonly secretRef: { readonly name: string };
}

/** `spec.helm`: a Helm chart rendered as `helm template` renders it (docs/helm.md); Flux's and Argo CD's names. */
interface HelmSpec {
  /** The chart of the repository spec.source.url names; unset: the chart at spec.source.path. */
  readonly chart?: string;
  /** With chart: a semver range; default the highest stable version, as helm picks one. */
  readonly version?: string;
  /** Default: the ApplySet's name. */
  readonly releaseName?: string;
  /** `--namespace` of the render; default spec.targetNamespace, else the ApplySet's namespace. */
  readonly namespace?: string;
  /** Inline values, given after the values files: they win. */
  readonly values?: Readonly<Record<string, unknown>>;
  /** Values files of the source's tree, relative to the chart's directory, in the order given. */
  readonly valuesFiles?: readonly string[];
  /** Values of ConfigMaps and Secrets of the ApplySet's namespace, read as its account; after the files. */
  readonly valuesFrom?: readonly HelmValuesReference[];
  /** Render the chart's crds/ too; default true. */
  readonly includeCRDs?: boolean;
  readonly pruneCRDs?: boolean; // Prune crds/ objects the chart drops; default false: kept (docs/helm.md#crds).
  /** Leave out the chart's test hooks; default true. */
  readonly skipTests?: boolean;
}

/** One entry of `spec.healthChecks`. */
type HealthCheckSpec = Readonly<Record<'apiVersion' | 'kind' | 'name', string>> & {
  readonly namespace?: string;
};

/**
 * `spec` as stored: durations are strings such as `1m30s`.
 * @internal The CRD test holds crds/ to it.
 */
export interface ApplySetSpec {
  readonly source: ApplySetSourceSpec;
  /** Decrypt sops files with the age identities of a Secret of the ApplySet's namespace (docs/sops.md). */
  readonly decryption?: DecryptionSpec;
  /** spec.source.path is a Helm chart, rendered with `helm template` (docs/helm.md). */
  readonly helm?: HelmSpec;
  readonly interval?: string;
  readonly retryInterval?: string;
  readonly timeout?: string;
  /** `DryRun`: report what would be pruned, delete nothing. */
  readonly prune: boolean | typeof PRUNE_DRY_RUN;
  /** `Warn`: report drift on a revision already applied instead of correcting it; default Correct. */
  readonly driftMode?: DriftMode;
  /** Fields whose live-side drift is neither corrected nor reported. */
  readonly driftIgnore?: readonly DriftIgnoreRule[];
  readonly allowEmpty?: boolean;
  readonly force?: boolean;
  /** Take over objects that exist without an apply-owner; default true. */
  readonly adopt?: boolean;
  /** The most objects one run may prune: a count, or `"20%"` of the set. */
  readonly pruneLimit?: number | string;
  /** Wait for the applied objects to be healthy (kstatus's rules) before Ready. */
  readonly wait?: boolean;
  /** Objects outside the set to wait for as well. */
  readonly healthChecks?: readonly HealthCheckSpec[];
  /** CEL health checks per apiVersion and kind, Flux's shape (docs/health.md); they win over the cluster default. */
  readonly healthCheckExprs?: readonly HealthCheckExpr[];
  /** ApplySets (Ready at their generation) and other objects (Current) to wait for. */
  readonly dependsOn?: readonly DependsOnEntry[];
  readonly suspend?: boolean;
  readonly targetNamespace?: string;
  readonly serviceAccountName?: string;
  readonly deletionPolicy?: DeletionPolicy;
  /** Apply to the cluster this kubeconfig names instead of the controller's (docs/remote-clusters.md). */
  readonly kubeConfig?: { readonly secretRef: { readonly name: string; readonly key?: string } };
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';
export type ApplySetConditionType = 'Ready' | 'Reconciling' | 'Stalled' | 'Drifted' | 'Fighting';

/** The shape of metav1.Condition. */
export interface ApplySetCondition {
  readonly type: ApplySetConditionType;
  readonly status: ConditionStatus;
  readonly observedGeneration?: number;
  /** RFC 3339. */
  readonly lastTransitionTime: string;
  /** CamelCase, as metav1.Condition requires. */
  readonly reason: string;
  readonly message: string;
}

export interface ApplySetSummary {
  /** Objects created or changed. */
  readonly applied?: number;
  readonly unchanged?: number;
  readonly pruned?: number;
  /** Objects of the set that existed without an apply-owner and were taken over this run. */
  readonly adopted?: number;
  /** Objects that left Git but could not be pruned this run (unreadable, or replaced meanwhile). */
  readonly pruneSkipped?: number;
  readonly failed?: number;
}

export interface ApplySetObjectError {
  /** `namespace:group:kind:name` as in the inventory, or the path of the file the error is about. */
  readonly object: string;
  readonly message: string;
}

export interface ApplySetErrors {
  /** At most MAX_STATUS_ERRORS. */
  readonly items: readonly ApplySetObjectError[];
  readonly totalCount: number;
  readonly truncated: boolean;
}

export interface ApplySetStatus {
  readonly conditions?: readonly ApplySetCondition[];
  readonly observedGeneration?: number;
  /** `branch@sha1:<sha>`, `tag@sha1:<sha>` or `sha1:<sha>`. */
  readonly lastAppliedRevision?: string;
  readonly lastAttemptedRevision?: string;
  /** How many PreDelete hooks lastAppliedRevision holds, run when it is deleted (docs/hooks.md). */
  readonly preDeleteHooks?: number;
  readonly summary?: ApplySetSummary;
  readonly errors?: ApplySetErrors;
  /** driftMode Warn: the objects found drifted and not corrected, with the fields (`null` clears it). */
  readonly drift?: ApplySetErrors | null;
  /** prune DryRun: the objects a prune would delete (`null` clears it). */
  readonly wouldPrune?: ApplySetErrors | null;
  /** What the set holds after the last run that reached the engine, as compact ids (status-inventory.ts). */
  readonly inventory?: ApplySetInventory;
  readonly lastHandledReconcileAt?: string;
}

/** `status.inventory`: the objects the set holds, the first few of them, and how many there are. */
export interface ApplySetInventory {
  /** `<namespace>_<name>_<group>_<kind>`, sorted; at most MAX_INVENTORY_ITEMS (status-inventory.ts). */
  readonly items: readonly string[];
  readonly totalCount: number;
  readonly truncated: boolean;
}

interface ApplySetMetadata {
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
}

export interface ApplySet {
  readonly apiVersion: typeof APPLYSET_API_VERSION;
  readonly kind: typeof APPLYSET_KIND;
  readonly metadata: ApplySetMetadata;
  readonly spec: ApplySetSpec;
  readonly status?: ApplySetStatus;
}

export type ResolvedGitRef =
  | { readonly type: 'branch'; readonly name: string }
  | { readonly type: 'tag'; readonly name: string }
  | { readonly type: 'commit'; readonly sha: string };

/**
 * The ref of a source: a Git ref, or an OCI artifact's tag (`type: 'tag'`), semver range of tags or
 * manifest digest.
 */
export type ResolvedSourceRef =
  | ResolvedGitRef
  | { readonly type: 'semver'; readonly range: string }
  | { readonly type: 'digest'; readonly digest: string };

/** `oci://` sources only: how the registry is reached and what the artifact must be signed with. */
export interface ResolvedOciOptions {
  /** Plain HTTP (spec.source.insecure). */
  readonly insecure: boolean;
  /** The Secret of cosign public keys (`*.pub`); undefined: not verified. */
  readonly verifySecretName: string | undefined;
}

/** The spec with every default applied and durations in milliseconds: what a reconcile works from. */
export interface ResolvedApplySetSpec {
  readonly source: ResolvedSourceConnection & {
    /** `git`, `oci` (`oci://`; a chart's is `<url>/<chart>`), `helm` (a chart of an http(s) repository). */
    readonly kind: 'git' | 'oci' | 'helm';
    readonly url: string;
    /** Git: a ResolvedGitRef; OCI: a tag, semver range or digest; a chart's: spec.helm.version's range. */
    readonly ref: ResolvedSourceRef;
    /** Set for an `oci://` source. */
    readonly oci: ResolvedOciOptions | undefined;
    /** Relative, without `./`, leading or trailing slashes; `''` is the repository root. */
    readonly path: string;
    readonly secretName: string | undefined;
    /** `spec.source.secretRef.namespace` as written; undefined means the ApplySet's own namespace. */
    readonly secretNamespace: string | undefined;
    /** `spec.source.ignore`, one pattern an entry. */
    readonly ignore: readonly string[];
  };
  /** `spec.decryption`: the Secret holding the age identities; undefined when nothing is decrypted. */
  readonly decryption: { readonly provider: 'sops'; readonly secretName: string } | undefined;
  /** `spec.helm` with its defaults: spec.source.path is a chart; undefined when it is not. */
  readonly helm: ResolvedHelmSpec | undefined;
  readonly intervalMs: number;
  readonly retryIntervalMs: number;
  readonly timeoutMs: number;
  readonly prune: boolean;
  /** spec.prune DryRun (then `prune` is true): judge the prune, delete nothing. */
  readonly pruneDryRun: boolean;
  readonly driftMode: DriftMode;
  readonly driftIgnore: readonly DriftIgnoreRule[];
  readonly allowEmpty: boolean;
  readonly force: boolean;
  readonly adopt: boolean;
  readonly pruneLimit: { readonly count: number } | { readonly percent: number } | undefined;
  readonly wait: boolean;
  /** `spec.healthChecks` as object identities (the group from the apiVersion). */
  readonly healthChecks: readonly { group: string; kind: string; namespace: string; name: string }[];
  /** `spec.healthCheckExprs`, every expression parsed once already. */
  readonly healthCheckExprs: readonly HealthCheckExpr[];
  /** The ApplySets of `spec.dependsOn` in order; a missing namespace is the ApplySet's own. */
  readonly dependsOn: readonly DependencyReference[];
  /** The other objects of `spec.dependsOn` in order, read as the ApplySet's account. */
  readonly dependsOnObjects: readonly ObjectDependency[];
  readonly suspend: boolean;
  readonly targetNamespace: string | undefined;
  readonly serviceAccountName: string | undefined;
  readonly deletionPolicy: DeletionPolicy;
  /** `spec.kubeConfig.secretRef`: the Secret, in the ApplySet's namespace, holding the remote cluster's kubeconfig. */
  readonly kubeConfig: RemoteKubeConfigRef | undefined;
}

/** How a chart is rendered: `helm template <releaseName> <chart> --namespace <namespace> ...`. */
export interface ResolvedHelmSpec {
  /** spec.helm.chart: the source is that chart's repository; undefined: the chart is at spec.source.path. */
  readonly chart: string | undefined;
  readonly releaseName: string;
  readonly namespace: string;
  /** Inline values, given to helm after the files (they win); `{}` when none. */
  readonly values: Readonly<Record<string, unknown>>;
  /** The values files, as paths from the source's root (normalized, never leaving it). */
  readonly valuesFiles: readonly string[];
  /** `spec.helm.valuesFrom` with its defaults, in order; given after the files, before `values`. */
  readonly valuesFrom: readonly ResolvedValuesReference[];
  readonly includeCRDs: boolean;
  readonly pruneCRDs: boolean;
  readonly skipTests: boolean;
}

/** Which Secret of the ApplySet's namespace holds the kubeconfig, and its key (undefined: `value`, then `value.yaml`). */
export interface RemoteKubeConfigRef {
  readonly secretName: string;
  readonly key: string | undefined;
}

export interface SpecFieldError {
  /** The field, as `spec.source.ref`. */
  readonly field: string;
  readonly message: string;
}

export type ResolveApplySetSpecResult =
  | { readonly ok: true; readonly spec: ResolvedApplySetSpec }
  | { readonly ok: false; readonly errors: readonly SpecFieldError[] };
