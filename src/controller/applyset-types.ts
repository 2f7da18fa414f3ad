/**
 * The ApplySet custom resource as the controller sees it: its names on the API, the shape of its spec and
 * status exactly as crds/applyset.dev_applysets.yaml declares them, and the pure step that turns a spec
 * read from the cluster into a resolved one with durations in milliseconds and every default filled in.
 *
 * The API server already validates against the CRD schema, but the controller checks again here: an
 * ApplySet stored before a schema change, or one from a server that skipped CEL rules, must become a
 * Stalled condition naming the field, not a crash in the middle of a reconcile.
 */

import type { DriftIgnoreRule } from '../plan/drift-ignore.js';
import { PRUNE_DRY_RUN, resolveDrift, resolvePrune, type DriftMode } from './safe-mode-spec.js';

export const APPLYSET_GROUP = 'applyset.dev';
export const APPLYSET_VERSION = 'v1alpha1';
export const APPLYSET_API_VERSION = `${APPLYSET_GROUP}/${APPLYSET_VERSION}`;
export const APPLYSET_KIND = 'ApplySet';
export const APPLYSET_LIST_KIND = 'ApplySetList';
export const APPLYSET_PLURAL = 'applysets';
export const APPLYSET_SINGULAR = 'applyset';
export const APPLYSET_CRD_NAME = `${APPLYSET_PLURAL}.${APPLYSET_GROUP}`;

/** Held while the children may still need pruning (deletionPolicy Delete). */
export const APPLYSET_FINALIZER = 'applyset.dev/finalizer';
/** Setting this annotation to a new value asks for a reconcile now; status echoes it when handled. */
export const RECONCILE_REQUESTED_AT_ANNOTATION = 'applyset.dev/reconcile-requested-at';
/** Its value, a revision, lets a run of that revision prune past spec.pruneLimit. */
export const APPROVE_PRUNE_ANNOTATION = 'applyset.dev/approve-prune';

/** The CRD's `maxItems` of status.errors.items; the rest is only counted. */
export const MAX_STATUS_ERRORS = 20;

/** The CRD's pattern for interval, retryInterval and timeout: a subset of Go's time.ParseDuration. */
export const DURATION_PATTERN = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;

export const DEFAULT_INTERVAL_MS = 5 * 60_000;
/** retryInterval, when unset, is the smaller of interval and this. */
export const DEFAULT_MAX_RETRY_INTERVAL_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 2 * 60_000;

export const DELETION_POLICIES = ['Delete', 'Orphan'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

export interface GitRefSpec {
  readonly branch?: string;
  readonly tag?: string;
  readonly commit?: string;
}

export interface ApplySetSourceSpec {
  readonly url: string;
  readonly ref: GitRefSpec;
  readonly path?: string;
  /** Files to leave out, .gitignore format, one pattern a line, paths from the repository root. */
  readonly ignore?: string;
  readonly secretRef?: SecretReference;
}

/**
 * `spec.source.secretRef`. `namespace` defaults to the ApplySet's own; another namespace is refused
 * unless the controller runs with `--allow-secret-refs-from` naming it (and without
 * `--no-cross-namespace-refs`).
 */
export interface SecretReference {
  readonly name: string;
  readonly namespace?: string;
}

/** One entry of `spec.healthChecks`. */
export interface HealthCheckSpec {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** `spec` as stored: durations are strings such as `1m30s`. */
export interface ApplySetSpec {
  readonly source: ApplySetSourceSpec;
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
  readonly suspend?: boolean;
  readonly targetNamespace?: string;
  readonly serviceAccountName?: string;
  readonly deletionPolicy?: DeletionPolicy;
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
  readonly summary?: ApplySetSummary;
  readonly errors?: ApplySetErrors;
  /** driftMode Warn: the objects found drifted and not corrected, with the fields (`null` clears it). */
  readonly drift?: ApplySetErrors | null;
  /** prune DryRun: the objects a prune would delete (`null` clears it). */
  readonly wouldPrune?: ApplySetErrors | null;
  readonly lastHandledReconcileAt?: string;
}

export interface ApplySetMetadata {
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

/** The spec with every default applied and durations in milliseconds: what a reconcile works from. */
export interface ResolvedApplySetSpec {
  readonly source: {
    readonly url: string;
    readonly ref: ResolvedGitRef;
    /** Relative, without `./`, leading or trailing slashes; `''` is the repository root. */
    readonly path: string;
    readonly secretName: string | undefined;
    /** `spec.source.secretRef.namespace` as written; undefined means the ApplySet's own namespace. */
    readonly secretNamespace: string | undefined;
    /** `spec.source.ignore`, one pattern an entry. */
    readonly ignore: readonly string[];
  };
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
  readonly suspend: boolean;
  readonly targetNamespace: string | undefined;
  readonly serviceAccountName: string | undefined;
  readonly deletionPolicy: DeletionPolicy;
}

export interface SpecFieldError {
  /** The field, as `spec.source.ref`. */
  readonly field: string;
  readonly message: string;
}

export type ResolveApplySetSpecResult =
  | { readonly ok: true; readonly spec: ResolvedApplySetSpec }
  | { readonly ok: false; readonly errors: readonly SpecFieldError[] };

export class InvalidDurationError extends Error {
  override readonly name = 'InvalidDurationError';
  readonly code = 'INVALID_DURATION';

  constructor(readonly text: string) {
    super(
      `invalid duration ${JSON.stringify(text)}: expected a sequence of numbers with units ms, s, m or h, such as 1m30s`,
    );
  }
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_TERM = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g;

/**
 * Parses the durations the CRD accepts (`300ms`, `1.5h`, `1m30s`) into whole milliseconds, the way Go's
 * time.ParseDuration reads the same text, so the API server's view and ours agree.
 */
export function parseDuration(text: string): number {
  if (!DURATION_PATTERN.test(text)) throw new InvalidDurationError(text);
  let total = 0;
  for (const match of text.matchAll(DURATION_TERM)) {
    const [, amount, unit] = match;
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  if (!Number.isFinite(total)) throw new InvalidDurationError(text);
  return Math.round(total);
}

const HTTP_URL = /^https?:\/\/\S+$/;
const URL_WITH_CREDENTIALS = /^https?:\/\/[^/]*@/;
const SHA1 = /^[0-9a-f]{40}$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const isNamespaceName = (text: string): boolean => DNS1123_LABEL.test(text) && text.length <= 63;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Checks a spec read from the cluster against the same rules as the CRD and fills in the defaults:
 * interval 5m, retryInterval the smaller of interval and 1m, timeout 2m, booleans false but adopt, deletionPolicy
 * Delete, the repository root as path. Every problem is reported, not just the first.
 */
export function resolveApplySetSpec(spec: unknown): ResolveApplySetSpecResult {
  const errors: SpecFieldError[] = [];
  const fail = (field: string, message: string): undefined => {
    errors.push({ field, message });
    return undefined;
  };

  if (!isRecord(spec)) return { ok: false, errors: [{ field: 'spec', message: 'must be an object' }] };

  const source = spec['source'];
  let url: string | undefined;
  let ref: ResolvedGitRef | undefined;
  let path = '';
  let secretName: string | undefined;
  let secretNamespace: string | undefined;
  let ignore: string[] = [];
  if (!isRecord(source)) {
    fail('spec.source', 'is required');
  } else {
    url = readString(source, 'url', 'spec.source.url', fail, { required: true });
    if (url !== undefined) {
      if (!HTTP_URL.test(url)) url = fail('spec.source.url', 'must be an http or https URL');
      else if (URL_WITH_CREDENTIALS.test(url))
        url = fail('spec.source.url', 'credentials must not be part of the URL; use secretRef');
    }
    ref = resolveRef(source['ref'], fail);
    const rawPath = readString(source, 'path', 'spec.source.path', fail);
    if (rawPath !== undefined) {
      const normalized = normalizeSourcePath(rawPath);
      if (normalized === undefined) fail('spec.source.path', pathProblem(rawPath));
      else path = normalized;
    }
    const ignoreText = readString(source, 'ignore', 'spec.source.ignore', fail);
    if (ignoreText !== undefined) ignore = ignoreText.split(/\r?\n/).filter((line) => line.trim() !== '');
    const secretRef = source['secretRef'];
    if (secretRef !== undefined) {
      if (!isRecord(secretRef)) fail('spec.source.secretRef', 'must be an object');
      else {
        secretName = readString(secretRef, 'name', 'spec.source.secretRef.name', fail, { required: true });
        if (secretName !== undefined && !DNS1123_SUBDOMAIN.test(secretName))
          secretName = fail('spec.source.secretRef.name', 'must be a DNS-1123 subdomain');
        secretNamespace = readString(secretRef, 'namespace', 'spec.source.secretRef.namespace', fail);
        if (secretNamespace !== undefined && !isNamespaceName(secretNamespace))
          secretNamespace = fail(
            'spec.source.secretRef.namespace',
            'must be a namespace name (a DNS-1123 label)',
          );
      }
    }
  }

  const intervalMs = readDuration(spec, 'interval', fail) ?? DEFAULT_INTERVAL_MS;
  const retryIntervalMs =
    readDuration(spec, 'retryInterval', fail) ?? Math.min(intervalMs, DEFAULT_MAX_RETRY_INTERVAL_MS);
  const timeoutMs = readDuration(spec, 'timeout', fail) ?? DEFAULT_TIMEOUT_MS;

  const pruneMode = resolvePrune(spec['prune'], fail);
  const { driftMode, driftIgnore } = resolveDrift(spec, fail);
  const allowEmpty = readBoolean(spec, 'allowEmpty', fail);
  const force = readBoolean(spec, 'force', fail);
  // The one boolean that defaults to true: kubectl adopts, and so did every ApplySet before the field.
  const adopt = spec['adopt'] === undefined ? true : readBoolean(spec, 'adopt', fail);
  const suspend = readBoolean(spec, 'suspend', fail);
  const wait = readBoolean(spec, 'wait', fail);
  const rawLimit = spec['pruneLimit'];
  let pruneLimit: { readonly count: number } | { readonly percent: number } | undefined;
  if (typeof rawLimit === 'number' && Number.isInteger(rawLimit) && rawLimit >= 0)
    pruneLimit = { count: rawLimit };
  else if (typeof rawLimit === 'string' && /^[0-9]+%$/.test(rawLimit)) {
    pruneLimit = { percent: Number(rawLimit.slice(0, -1)) };
  } else if (rawLimit !== undefined) fail('spec.pruneLimit', 'must be a count (10) or a percentage ("20%")');
  const healthChecks: { group: string; kind: string; namespace: string; name: string }[] = [];
  const rawChecks = spec['healthChecks'];
  if (rawChecks !== undefined) {
    if (!Array.isArray(rawChecks)) fail('spec.healthChecks', 'must be a list');
    else {
      rawChecks.forEach((entry: unknown, index) => {
        const field = `spec.healthChecks[${index}]`;
        if (!isRecord(entry)) return fail(field, 'must be an object');
        const apiVersion = readString(entry, 'apiVersion', `${field}.apiVersion`, fail, { required: true });
        const kind = readString(entry, 'kind', `${field}.kind`, fail, { required: true });
        const name = readString(entry, 'name', `${field}.name`, fail, { required: true });
        const namespace = readString(entry, 'namespace', `${field}.namespace`, fail) ?? '';
        if (apiVersion === undefined || kind === undefined || name === undefined) return undefined;
        const slash = apiVersion.indexOf('/');
        healthChecks.push({ group: slash < 0 ? '' : apiVersion.slice(0, slash), kind, namespace, name });
        return undefined;
      });
    }
  }

  let targetNamespace = readString(spec, 'targetNamespace', 'spec.targetNamespace', fail);
  if (targetNamespace !== undefined && !isNamespaceName(targetNamespace))
    targetNamespace = fail('spec.targetNamespace', 'must be a DNS-1123 label');
  let serviceAccountName = readString(spec, 'serviceAccountName', 'spec.serviceAccountName', fail);
  if (
    serviceAccountName !== undefined &&
    !(DNS1123_SUBDOMAIN.test(serviceAccountName) && serviceAccountName.length <= 253)
  )
    serviceAccountName = fail('spec.serviceAccountName', 'must be a DNS-1123 subdomain');

  const rawPolicy = spec['deletionPolicy'];
  let deletionPolicy: DeletionPolicy = 'Delete';
  if (rawPolicy !== undefined) {
    if (isDeletionPolicy(rawPolicy)) deletionPolicy = rawPolicy;
    else fail('spec.deletionPolicy', `must be one of ${DELETION_POLICIES.join(', ')}`);
  }

  if (errors.length > 0 || url === undefined || ref === undefined || pruneMode === undefined)
    return { ok: false, errors };
  return {
    ok: true,
    spec: {
      source: { url, ref, path, secretName, secretNamespace, ignore },
      intervalMs,
      retryIntervalMs,
      timeoutMs,
      ...pruneMode,
      driftMode,
      driftIgnore,
      allowEmpty,
      force,
      adopt,
      pruneLimit,
      wait,
      healthChecks,
      suspend,
      targetNamespace,
      serviceAccountName,
      deletionPolicy,
    },
  };
}

/**
 * `./apps/`, `apps//web` and `.` are the same directories as `apps`, `apps/web` and the root; absolute
 * paths and `..` segments could leave the checkout, so they have no normal form.
 */
export function normalizeSourcePath(path: string): string | undefined {
  if (path.startsWith('/')) return undefined;
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return undefined;
  return segments.join('/');
}

type Fail = (field: string, message: string) => undefined;

function resolveRef(ref: unknown, fail: Fail): ResolvedGitRef | undefined {
  if (!isRecord(ref)) return fail('spec.source.ref', 'is required');
  const given = (['branch', 'tag', 'commit'] as const).filter((key) => ref[key] !== undefined);
  if (given.length !== 1) return fail('spec.source.ref', 'exactly one of branch, tag or commit must be set');
  const [key] = given;
  const value = readString(ref, key ?? 'branch', `spec.source.ref.${key}`, fail, { required: true });
  if (value === undefined) return undefined;
  if (value === '') return fail(`spec.source.ref.${key}`, 'must not be empty');
  switch (key) {
    case 'branch':
      return { type: 'branch', name: value };
    case 'tag':
      return { type: 'tag', name: value };
    case 'commit':
      return SHA1.test(value)
        ? { type: 'commit', sha: value }
        : fail('spec.source.ref.commit', 'must be a full 40-character lowercase SHA-1');
    default:
      return undefined;
  }
}

function pathProblem(path: string): string {
  return path.startsWith('/') ? 'must be relative to the repository root' : "must not contain '..' segments";
}

function readString(
  object: Readonly<Record<string, unknown>>,
  key: string,
  field: string,
  fail: Fail,
  options: { readonly required?: boolean } = {},
): string | undefined {
  const value = object[key];
  if (value === undefined) return options.required === true ? fail(field, 'is required') : undefined;
  if (typeof value !== 'string') return fail(field, 'must be a string');
  return value;
}

function readBoolean(spec: Readonly<Record<string, unknown>>, key: string, fail: Fail): boolean {
  const value = spec[key];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    fail(`spec.${key}`, 'must be true or false');
    return false;
  }
  return value;
}

function readDuration(spec: Readonly<Record<string, unknown>>, key: string, fail: Fail): number | undefined {
  const text = readString(spec, key, `spec.${key}`, fail);
  if (text === undefined) return undefined;
  try {
    const ms = parseDuration(text);
    return ms > 0 ? ms : fail(`spec.${key}`, 'must be longer than zero');
  } catch (error) {
    if (error instanceof InvalidDurationError) return fail(`spec.${key}`, error.message);
    throw error;
  }
}

function isDeletionPolicy(value: unknown): value is DeletionPolicy {
  return (DELETION_POLICIES as readonly unknown[]).includes(value);
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
