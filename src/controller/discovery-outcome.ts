import { isApplySetInputError } from '../apply/apply-set-input-error.js';
import { ManifestSetError } from '../manifests/manifest-error.js';
import { classifyFailure } from '../errors/classify-failure.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';

/** How soon a reconcile that waited in vain for a CRD of its set to be Established tries again. */
export const CRD_WAIT_REQUEUE_MS = 5_000;

/**
 * The outcome of an engine failure that is about kinds, or undefined for any other failure.
 *
 * A CRD of the set not Established yet is a known delay (`waiting`: requeue soon, not stalled, no
 * backoff). A kind that neither the cluster nor the set's CRDs define stalls as `UnknownKind`, naming
 * the file and the kind; the next reconcile asks discovery again, so installing the CRD is enough.
 */
export function discoveryOutcome(error: unknown, revision: string): ReconcileOutcome | undefined {
  const failure = classifyFailure(error);
  if (failure.reason === 'CrdNotEstablished') {
    return {
      kind: 'waiting',
      reason: failure.reason,
      message: `${failure.message}: the custom resources of it wait`,
      revision,
      afterMs: CRD_WAIT_REQUEUE_MS,
    };
  }
  if (failure.reason !== 'UnknownKind') return undefined;
  if (!isApplySetInputError(error)) {
    return { kind: 'stalled', reason: failure.reason, message: failure.message, revision };
  }
  const cause = (error as { cause?: unknown }).cause;
  return {
    kind: 'stalled',
    reason: failure.reason,
    message: `revision ${revision} was refused, nothing was changed: ${error.problems.join('; ')}`,
    revision,
    ...(cause instanceof ManifestSetError
      ? { errors: cause.errors.map((problem) => ({ object: problem.source.file, message: problem.message })) }
      : {}),
  };
}
