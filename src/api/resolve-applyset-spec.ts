import {
  DEFAULT_INTERVAL_MS,
  DEFAULT_MAX_RETRY_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  DELETION_POLICIES,
  type DeletionPolicy,
  type ResolveApplySetSpecResult,
  type ResolvedApplySetSpec,
  type RemoteKubeConfigRef,
  type ResolvedSourceRef,
  type SpecFieldError,
} from './applyset-types.js';
import { helmChartRequest, resolveHelmSpec, type ApplySetIdentity } from './resolve-helm-spec.js';
import { resolveValuesFrom } from './resolve-helm-values-from.js';
import { resolveDependsOn } from './resolve-depends-on.js';
import { resolveHealthCheckExprs } from './resolve-health-check-exprs.js';
import { resolveDrift, resolvePrune } from './safe-mode-spec.js';
import { resolveKubeConfigRef } from './resolve-kube-config-ref.js';
import { resolveSourceSpec } from './resolve-source-spec.js';
import {
  DNS1123_SUBDOMAIN,
  isNamespaceName,
  isRecord,
  readBoolean,
  readDuration,
  readString,
  type SpecFail,
} from './spec-fields.js';

/*
 * The API server already validates against the CRD schema, but the controller checks again here: an
 * ApplySet stored before a schema change, or one from a server that skipped CEL rules, must become a
 * Stalled condition naming the field, not a crash in the middle of a reconcile.
 */

/**
 * Checks a spec read from the cluster against the same rules as the CRD and fills in the defaults:
 * interval 5m, retryInterval the smaller of interval and 1m, timeout 2m, booleans false but adopt, deletionPolicy
 * Delete, the repository root as path. Every problem is reported, not just the first.
 */
/** Specs parsed by this process, strictly or leniently. */
let parses = 0;

/** @internal How many specs this process parsed: a test counts those of one reconcile. */
export function specParseCount(): number {
  return parses;
}

/**
 * `owner`, the ApplySet's name and namespace, gives spec.helm its defaults (the release name, the
 * namespace); without it spec.helm must name both.
 */
export function resolveApplySetSpec(spec: unknown, owner?: ApplySetIdentity): ResolveApplySetSpecResult {
  parses += 1;
  const errors: SpecFieldError[] = [];
  const fail: SpecFail = (field, message) => {
    errors.push({ field, message });
    return undefined;
  };
  if (!isRecord(spec)) return { ok: false, errors: [{ field: 'spec', message: 'must be an object' }] };

  // Each field is read in the order of the CRD, so the problems are listed in that order.
  const { url, ref, ...source } = resolveSourceSpec(spec['source'], helmChartRequest(spec['helm']), fail);
  const decryption = resolveDecryption(spec['decryption'], fail);
  const helm = resolveHelmSpec(
    spec['helm'],
    { sourcePath: source.path, targetNamespace: writtenTargetNamespace(spec), owner },
    fail,
  );
  const { intervalMs, retryIntervalMs } = resolveIntervals(spec, fail);
  const timeoutMs = readDuration(spec, 'timeout', fail) ?? DEFAULT_TIMEOUT_MS;
  const pruneMode = resolvePrune(spec['prune'], fail);
  const { driftMode, driftIgnore } = resolveDrift(spec, fail);
  const switches = resolveSwitches(spec, fail);
  const pruneLimit = resolvePruneLimit(spec['pruneLimit'], fail);
  const healthChecks = resolveHealthChecks(spec['healthChecks'], fail);
  const healthCheckExprs = resolveHealthCheckExprs(spec['healthCheckExprs'], 'spec.healthCheckExprs', fail);
  const { dependsOn, dependsOnObjects } = resolveDependsOn(spec['dependsOn'], fail);
  const names = resolveNames(spec, fail);
  const deletionPolicy = resolveDeletionPolicy(spec['deletionPolicy'], fail);
  const kubeConfig = resolveKubeConfigRef(spec['kubeConfig'], fail);

  if (errors.length > 0 || url === undefined || ref === undefined || pruneMode === undefined)
    return { ok: false, errors };
  return {
    ok: true,
    spec: {
      source: { url, ref, ...source },
      decryption,
      helm,
      intervalMs,
      retryIntervalMs,
      timeoutMs,
      ...pruneMode,
      driftMode,
      driftIgnore,
      allowEmpty: switches.allowEmpty,
      force: switches.force,
      adopt: switches.adopt,
      pruneLimit,
      wait: switches.wait,
      healthChecks,
      healthCheckExprs,
      dependsOn,
      dependsOnObjects,
      suspend: switches.suspend,
      ...names,
      deletionPolicy,
      kubeConfig,
    },
  };
}

/**
 * What the controller needs of a spec it must act on even when the spec is invalid: a deletion (the
 * finalizer prunes or releases the children whatever else is wrong), the requeue of a stalled run, and
 * the informer's view of which Secret to poll and which source a push names. Read by the same field readers as resolveApplySetSpec,
 * a wrong field left at its default; the account and target namespace as written, so a deletion acts as
 * the same account the applies did.
 */
export interface LenientApplySetSpec {
  readonly suspend: boolean;
  readonly deletionPolicy: DeletionPolicy;
  readonly serviceAccountName: string | undefined;
  readonly targetNamespace: string | undefined;
  readonly intervalMs: number;
  readonly retryIntervalMs: number;
  /** `spec.source.url` and `ref`, unless wrong: what a push webhook matches. */
  readonly url: string | undefined;
  readonly ref: ResolvedSourceRef | undefined;
  readonly secretName: string | undefined;
  readonly secretNamespace: string | undefined;
  /** `spec.kubeConfig.secretRef`, unless wrong: a deletion prunes on the cluster the applies wrote to. */
  readonly kubeConfig: RemoteKubeConfigRef | undefined;
  /** `spec.decryption.secretRef.name`, unless wrong: a rotated key is noticed by the Secret poller. */
  readonly decryptionSecretName: string | undefined;
  /** The Secrets of `spec.helm.valuesFrom`, those entries that are right: the Secret poller polls them too. */
  readonly valuesFromSecretNames: readonly string[];
}

export function lenientApplySetSpec(spec: unknown): LenientApplySetSpec {
  parses += 1;
  const ignore: SpecFail = () => undefined;
  const raw = isRecord(spec) ? spec : {};
  const { url, ref, secretName, secretNamespace } = resolveSourceSpec(
    raw['source'],
    helmChartRequest(raw['helm']),
    ignore,
  );
  return {
    suspend: readBoolean(raw, 'suspend', ignore),
    deletionPolicy: resolveDeletionPolicy(raw['deletionPolicy'], ignore),
    serviceAccountName: readString(raw, 'serviceAccountName', 'spec.serviceAccountName', ignore),
    targetNamespace: readString(raw, 'targetNamespace', 'spec.targetNamespace', ignore),
    ...resolveIntervals(raw, ignore),
    url,
    ref,
    secretName,
    secretNamespace,
    kubeConfig: resolveKubeConfigRef(raw['kubeConfig'], ignore),
    decryptionSecretName: resolveDecryption(raw['decryption'], ignore)?.secretName,
    valuesFromSecretNames: valuesFromSecretNames(raw['helm'], ignore),
  };
}

type Spec = Readonly<Record<string, unknown>>;

function valuesFromSecretNames(helm: unknown, ignore: SpecFail): string[] {
  if (!isRecord(helm)) return [];
  const references = resolveValuesFrom(helm['valuesFrom'], ignore);
  return references.filter((reference) => reference.kind === 'Secret').map((reference) => reference.name);
}

/** interval (default 5m) and retryInterval (default the smaller of interval and 1m). */
function resolveIntervals(
  spec: Spec,
  fail: SpecFail,
): Pick<LenientApplySetSpec, 'intervalMs' | 'retryIntervalMs'> {
  const intervalMs = readDuration(spec, 'interval', fail) ?? DEFAULT_INTERVAL_MS;
  const retryIntervalMs =
    readDuration(spec, 'retryInterval', fail) ?? Math.min(intervalMs, DEFAULT_MAX_RETRY_INTERVAL_MS);
  return { intervalMs, retryIntervalMs };
}

/** spec.targetNamespace as written, when it is a namespace's name (resolveNames reports it otherwise). */
function writtenTargetNamespace(spec: Spec): string | undefined {
  const given = spec['targetNamespace'];
  return typeof given === 'string' && isNamespaceName(given) ? given : undefined;
}

function resolveSwitches(
  spec: Spec,
  fail: SpecFail,
): Pick<ResolvedApplySetSpec, 'allowEmpty' | 'force' | 'adopt' | 'suspend' | 'wait'> {
  const allowEmpty = readBoolean(spec, 'allowEmpty', fail);
  const force = readBoolean(spec, 'force', fail);
  // The one boolean that defaults to true: kubectl adopts, and so did every ApplySet before the field.
  const adopt = spec['adopt'] === undefined ? true : readBoolean(spec, 'adopt', fail);
  const suspend = readBoolean(spec, 'suspend', fail);
  const wait = readBoolean(spec, 'wait', fail);
  return { allowEmpty, force, adopt, suspend, wait };
}

/** `spec.decryption`: provider sops and the name of a Secret of the ApplySet's namespace. */
function resolveDecryption(raw: unknown, fail: SpecFail): ResolvedApplySetSpec['decryption'] {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) return fail('spec.decryption', 'must be an object');
  const provider = readString(raw, 'provider', 'spec.decryption.provider', fail, { required: true });
  if (provider !== undefined && provider !== 'sops') fail('spec.decryption.provider', 'must be sops');
  const secretRef = raw['secretRef'];
  if (!isRecord(secretRef)) return fail('spec.decryption.secretRef', 'must be an object');
  const secretName = readString(secretRef, 'name', 'spec.decryption.secretRef.name', fail, {
    required: true,
  });
  if (secretName !== undefined && !(DNS1123_SUBDOMAIN.test(secretName) && secretName.length <= 253))
    return fail('spec.decryption.secretRef.name', 'must be a DNS-1123 subdomain');
  return provider === 'sops' && secretName !== undefined ? { provider, secretName } : undefined;
}

function resolvePruneLimit(raw: unknown, fail: SpecFail): ResolvedApplySetSpec['pruneLimit'] {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return { count: raw };
  if (typeof raw === 'string' && /^[0-9]+%$/.test(raw)) return { percent: Number(raw.slice(0, -1)) };
  if (raw !== undefined) fail('spec.pruneLimit', 'must be a count (10) or a percentage ("20%")');
  return undefined;
}

type HealthCheck = ResolvedApplySetSpec['healthChecks'][number];

function resolveHealthChecks(raw: unknown, fail: SpecFail): HealthCheck[] {
  const healthChecks: HealthCheck[] = [];
  if (raw === undefined) return healthChecks;
  if (!Array.isArray(raw)) {
    fail('spec.healthChecks', 'must be a list');
    return healthChecks;
  }
  raw.forEach((entry: unknown, index) => {
    const check = resolveHealthCheck(entry, `spec.healthChecks[${index}]`, fail);
    if (check !== undefined) healthChecks.push(check);
  });
  return healthChecks;
}

/** One entry as an object identity: the group is the apiVersion's part before the slash. */
function resolveHealthCheck(entry: unknown, field: string, fail: SpecFail): HealthCheck | undefined {
  if (!isRecord(entry)) return fail(field, 'must be an object');
  const apiVersion = readString(entry, 'apiVersion', `${field}.apiVersion`, fail, { required: true });
  const kind = readString(entry, 'kind', `${field}.kind`, fail, { required: true });
  const name = readString(entry, 'name', `${field}.name`, fail, { required: true });
  const namespace = readString(entry, 'namespace', `${field}.namespace`, fail) ?? '';
  if (apiVersion === undefined || kind === undefined || name === undefined) return undefined;
  const slash = apiVersion.indexOf('/');
  return { group: slash < 0 ? '' : apiVersion.slice(0, slash), kind, namespace, name };
}

function resolveNames(
  spec: Spec,
  fail: SpecFail,
): Pick<ResolvedApplySetSpec, 'targetNamespace' | 'serviceAccountName'> {
  let targetNamespace = readString(spec, 'targetNamespace', 'spec.targetNamespace', fail);
  if (targetNamespace !== undefined && !isNamespaceName(targetNamespace))
    targetNamespace = fail('spec.targetNamespace', 'must be a DNS-1123 label');
  let serviceAccountName = readString(spec, 'serviceAccountName', 'spec.serviceAccountName', fail);
  if (
    serviceAccountName !== undefined &&
    !(DNS1123_SUBDOMAIN.test(serviceAccountName) && serviceAccountName.length <= 253)
  )
    serviceAccountName = fail('spec.serviceAccountName', 'must be a DNS-1123 subdomain');
  return { targetNamespace, serviceAccountName };
}

function resolveDeletionPolicy(raw: unknown, fail: SpecFail): DeletionPolicy {
  if (raw === undefined) return 'Delete';
  if (isDeletionPolicy(raw)) return raw;
  fail('spec.deletionPolicy', `must be one of ${DELETION_POLICIES.join(', ')}`);
  return 'Delete';
}

function isDeletionPolicy(value: unknown): value is DeletionPolicy {
  return (DELETION_POLICIES as readonly unknown[]).includes(value);
}
