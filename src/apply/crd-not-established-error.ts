import { IntentError, type FailureStep } from '../errors/intent-error.js';

/**
 * How soon a reconcile that waited in vain for a CRD of its set to be Established tries again.
 * @internal A delay the tests assert the requeue against.
 */
export const CRD_WAIT_REQUEUE_MS = 5_000;

/**
 * A CRD of the set did not become Established (and its kinds did not show in discovery) in time: a
 * known delay, so the caller waits and tries again soon rather than backing off or stalling.
 */
export class CrdNotEstablishedError extends IntentError {
  override readonly name = 'CrdNotEstablishedError';
  readonly code = 'CRD_NOT_ESTABLISHED';
  readonly intent = 'waiting';
  readonly reason = 'CrdNotEstablished';
  constructor(
    readonly crd: string,
    options?: { cause?: unknown },
  ) {
    super(`CustomResourceDefinition ${crd} is not Established yet`, options);
  }

  /** At the apply, that the objects of its kinds wait with it. */
  override describe(at: FailureStep | undefined): string {
    return at?.step === 'apply' ? `${this.message}: the custom resources of it wait` : this.message;
  }

  override retryAfterMs(): number {
    return CRD_WAIT_REQUEUE_MS;
  }
}
