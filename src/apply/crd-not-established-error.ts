import { IntentError } from '../errors/intent-error.js';

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
}
