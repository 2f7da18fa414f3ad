import { CRD_WAIT_REQUEUE_MS } from '../apply/crd-not-established-error.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { failureOutcome } from './failure-outcome.js';

export { CRD_WAIT_REQUEUE_MS };

/**
 * The outcome of an engine failure that is about kinds, or undefined for any other failure.
 *
 * A CRD of the set not Established yet is a known delay (`waiting`: requeue soon, not stalled, no
 * backoff). A kind that neither the cluster nor the set's CRDs define stalls as `UnknownKind`, naming
 * the file and the kind; the next reconcile asks discovery again, so installing the CRD is enough.
 * Both are decided by the errors themselves (`classifyFailure`); this picks them out by their reason.
 */
export function discoveryOutcome(error: unknown, revision: string): ReconcileOutcome | undefined {
  const outcome = failureOutcome(error, { step: 'apply', revision, timedOut: false });
  if (outcome.kind === 'applied') return undefined;
  return outcome.reason === 'CrdNotEstablished' || outcome.reason === 'UnknownKind' ? outcome : undefined;
}
