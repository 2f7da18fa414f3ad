import { IntentError } from '../errors/intent-error.js';

/**
 * The apply-config object changed between the read this run planned on and one of its writes (the
 * inventory, the hash): the server answered 409 to the resourceVersion precondition. Someone else —
 * another replica that took over, a user — wrote it, so the plan is stale. Retryable: the next run
 * reads again and plans again; nothing is merged blindly over the other writer's inventory.
 */
export class ParentChangedError extends IntentError {
  override readonly name = 'ParentChangedError';
  readonly code = 'APPLYSET_PARENT_CHANGED';
  readonly intent = 'retryable';
  readonly reason = 'ParentChanged';
  constructor(
    readonly parent: string,
    options?: { cause?: unknown },
  ) {
    super(`${parent} was changed by someone else during the run; it will be read and planned again`, options);
  }
}
