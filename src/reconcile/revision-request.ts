/**
 * Step 11's request, which the preview asks too (in dry run): what the engine is asked for an ApplySet
 * at a revision, and whether the run is steady.
 */
import type { ApplySetRequest, PruneRequest } from '../apply/apply-set-contract.js';
import { parentOf } from '../kube/applyset-api.js';
import { APPROVE_PRUNE_ANNOTATION, type ApplySet, type ResolvedApplySetSpec } from '../api/applyset-types.js';
import { healthJudge, mergeHealthCheckExprs, type HealthCheckExpr } from '../health/cel-health.js';
import { refuseNestedApplySets } from '../api/refuse-nested-applysets.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';

/**
 * Step 11's request: what the engine is asked for this revision, and whether the run is steady (the
 * revision and spec were applied in full before, so a change it makes is drift).
 */
export function revisionRequest(
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  files: readonly ManifestFile[],
  { revision, ...settings }: { revision: string | undefined } & RequestSettings,
  signal: AbortSignal,
): { readonly request: ApplySetRequest; readonly steady: boolean } {
  const steady = revision !== undefined && appliedBefore(applySet, revision);
  const options = { revision: revision ?? '', steady, ...settings };
  return { request: engineRequest(applySet, spec, files, options, signal), steady };
}

/** What the controller adds to every ApplySet's request. */
interface RequestSettings {
  readonly allowNested: boolean;
  /** The cluster's default CEL health checks (the chart's health.checkExprs); the spec's win per kind. */
  readonly defaultHealthCheckExprs?: readonly HealthCheckExpr[] | undefined;
}

/** The settings of the controller's flags: --allow-nested-applysets, --health-check-exprs. */
export function requestSettings(options: {
  readonly tenancy: { readonly allowNestedApplySets?: boolean };
  readonly healthCheckExprs?: readonly HealthCheckExpr[];
}): RequestSettings {
  return {
    allowNested: options.tenancy.allowNestedApplySets === true,
    defaultHealthCheckExprs: options.healthCheckExprs,
  };
}

/** What the engine is asked to do for this ApplySet at this revision. */
function engineRequest(
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  files: readonly ManifestFile[],
  options: { revision: string; steady: boolean } & RequestSettings,
  signal: AbortSignal,
): ApplySetRequest {
  const { revision, steady, allowNested } = options;
  const { namespace } = applySet.metadata;
  const checks = mergeHealthCheckExprs(options.defaultHealthCheckExprs ?? [], spec.healthCheckExprs);
  return {
    input: {
      files,
      parent: parentOf(applySet),
      defaultNamespace: spec.targetNamespace ?? namespace,
      // No manifest creates or changes an ApplySet unless the operator granted nesting: an ApplySet
      // names its own ServiceAccount, so one would hand its repository a sibling's identity.
      ...(allowNested ? {} : { screenObjects: refuseNestedApplySets }),
    },
    write: {
      dryRun: false,
      force: spec.force,
      adopt: spec.adopt,
      // driftMode Warn holds back only drift: a new revision or spec is applied in full.
      drift: { correct: !(steady && spec.driftMode === 'Warn'), ignore: spec.driftIgnore },
    },
    prune: pruneRequest(applySet, spec, revision),
    ...(spec.wait ? { wait: { timeoutMs: spec.timeoutMs, healthChecks: spec.healthChecks } } : {}),
    // Hooks run when a new revision or spec is applied, never on a steady run (docs/hooks.md).
    hooks: { run: !steady, timeoutMs: spec.timeoutMs },
    syncWaves: { timeoutMs: spec.timeoutMs },
    ...(checks.length === 0 ? {} : { healthOf: healthJudge(checks) }),
    signal,
  };
}

function pruneRequest(applySet: ApplySet, spec: ResolvedApplySetSpec, revision: string): PruneRequest {
  if (!spec.prune) return { mode: 'off' };
  if (spec.pruneDryRun) return { mode: 'dry-run', allowEmpty: spec.allowEmpty };
  // A revision approved with applyset.dev/approve-prune prunes past the limit.
  const approved = applySet.metadata.annotations?.[APPROVE_PRUNE_ANNOTATION] === revision;
  return {
    mode: 'delete',
    allowEmpty: spec.allowEmpty,
    ...(spec.pruneLimit === undefined || approved ? {} : { limit: spec.pruneLimit }),
  };
}

/**
 * Whether `revision` and the current spec were already applied in full: Ready True for this
 * generation, at this revision. A change such a run makes to an object was made by someone else.
 */
function appliedBefore(applySet: ApplySet, revision: string): boolean {
  const ready = applySet.status?.conditions?.find((c) => c.type === 'Ready');
  return (
    applySet.status?.lastAppliedRevision === revision &&
    ready?.status === 'True' &&
    ready.observedGeneration !== undefined &&
    ready.observedGeneration === applySet.metadata.generation
  );
}
