import { isApplySetInputError } from '../apply/apply-set-input-error.js';
import { classifyFailure } from '../errors/classify-failure.js';
import type { FailureIntent } from '../errors/intent-error.js';
import { isIntentError } from '../errors/intent-error.js';
import { GitPathNotFoundError } from '../git/git-error.js';
import { InventoryParseError } from '../inventory/parse-inventory.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { ManifestSetError } from '../manifests/manifest-error.js';
import { objectRefKey } from '../manifests/object-ref.js';
import { NestedApplySetRefusedError } from '../api/refuse-nested-applysets.js';
import type { ApplySetObjectError, ResolvedApplySetSpec } from '../api/applyset-types.js';
import { discoveryOutcome } from './discovery-outcome.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';

/** The step of a reconcile that threw, with what its messages name. */
export type FailedStep =
  | { readonly step: 'fetch'; readonly spec: ResolvedApplySetSpec }
  | { readonly step: 'load'; readonly spec: ResolvedApplySetSpec; readonly revision: string }
  | { readonly step: 'apply'; readonly revision: string; readonly timedOut: boolean };

/**
 * Any error thrown by a step of the reconcile, as an outcome: `classifyFailure` gives its intent and
 * reason; this adds what the user reads (the revision, the hint, the objects concerned).
 */
export function failureOutcome(error: unknown, at: FailedStep): ReconcileOutcome {
  switch (at.step) {
    case 'fetch':
      return fetchFailure(error, at.spec);
    case 'load':
      return loadFailure(error, at.spec, at.revision);
    case 'apply':
      return applyFailure(error, at.revision, at.timedOut);
  }
}

function fetchFailure(error: unknown, spec: ResolvedApplySetSpec): ReconcileOutcome {
  const { intent, reason, message } = classifyFailure(error, 'GitFetchFailed');
  const kind = stalledOrRetryable(intent);
  if (reason === 'AuthenticationFailed') {
    const hint =
      spec.source.secretName === undefined
        ? 'the repository needs credentials: set spec.source.secretRef'
        : `check username/password or token in Secret ${spec.source.secretName}`;
    return { kind, reason, message: `${message}: ${hint}` };
  }
  if (!isIntentError(error)) {
    return { kind, reason, message: `fetching ${spec.source.url} failed: ${message}` };
  }
  return { kind, reason, message };
}

function loadFailure(error: unknown, spec: ResolvedApplySetSpec, revision: string): ReconcileOutcome {
  const { intent, reason, message } = classifyFailure(error, 'LoadFailed');
  if (error instanceof GitPathNotFoundError) {
    const detail = error.found === 'submodule' ? 'is a submodule' : 'does not exist';
    const where = `path "${spec.source.path}" ${detail} in revision ${revision}`;
    return { kind: 'stalled', reason, message: where, revision };
  }
  return { kind: stalledOrRetryable(intent), reason, message, revision };
}

function applyFailure(error: unknown, revision: string, timedOut: boolean): ReconcileOutcome {
  const aboutKinds = discoveryOutcome(error, revision);
  if (aboutKinds !== undefined) return aboutKinds;
  const { intent, reason, message } = classifyFailure(error);
  if (error instanceof InventoryParseError) {
    return {
      kind: 'stalled',
      reason,
      message: `${inventoryDamage(error)}; nothing was applied or pruned`,
      revision,
      errors: [{ object: `last-applied-objects line ${error.line}`, message: error.message }],
    };
  }
  if (isApplySetInputError(error)) {
    const cause = (error as { cause?: unknown }).cause;
    const errors: ApplySetObjectError[] =
      cause instanceof ManifestSetError
        ? cause.errors.map((e) => ({ object: e.source.file, message: e.message }))
        : error instanceof NestedApplySetRefusedError
          ? error.refused.map((e) => ({ object: objectRefKey(e.ref), message: e.message }))
          : error.problems.map((problem) => ({ object: error.subject ?? '', message: problem }));
    return {
      kind: 'stalled',
      reason,
      message: `revision ${revision} was refused, nothing was changed: ${error.problems.join('; ')}`,
      revision,
      errors,
    };
  }
  if (timedOut && !isIntentError(error)) {
    return {
      kind: 'retryable',
      reason: 'Timeout',
      message: `the reconcile did not finish in time: ${message}`,
      revision,
    };
  }
  return { kind: stalledOrRetryable(intent), reason, message, revision };
}

/** What a user reads about a damaged inventory: where, which line, and what to do. */
export function inventoryDamage(error: InventoryParseError): string {
  return `the inventory annotation ${MetadataKeys.lastAppliedObjects} cannot be read (${error.message}): fix or remove that line`;
}

/** A `waiting` failure outside discovery has no known delay: it backs off like a retryable one. */
function stalledOrRetryable(intent: FailureIntent): 'stalled' | 'retryable' {
  return intent === 'stalled' ? 'stalled' : 'retryable';
}
