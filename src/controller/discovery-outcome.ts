import { isApplySetInputError } from '../apply/apply-set-input-error.js';
import { CrdNotEstablishedError } from '../apply/crd-not-established-error.js';
import { UnknownKindError } from '../kube/kube-api-error.js';
import { ManifestSetError } from '../manifests/manifest-error.js';
import type { ReconcileOutcome } from './map-reconcile-outcome.js';

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
  if (error instanceof CrdNotEstablishedError) {
    return {
      kind: 'waiting',
      reason: 'CrdNotEstablished',
      message: `${error.message}: the custom resources of it wait`,
      revision,
      afterMs: CRD_WAIT_REQUEUE_MS,
    };
  }
  if (error instanceof UnknownKindError) {
    return { kind: 'stalled', reason: 'UnknownKind', message: error.message, revision };
  }
  if (!isApplySetInputError(error)) return undefined;
  const cause = (error as { cause?: unknown }).cause;
  if (
    !(cause instanceof ManifestSetError) ||
    cause.errors.length === 0 ||
    cause.errors.some((problem) => problem.code !== 'unknown-kind')
  ) {
    return undefined;
  }
  return {
    kind: 'stalled',
    reason: 'UnknownKind',
    message: `revision ${revision} was refused, nothing was changed: ${error.problems.join('; ')}`,
    revision,
    errors: cause.errors.map((problem) => ({ object: problem.source.file, message: problem.message })),
  };
}
