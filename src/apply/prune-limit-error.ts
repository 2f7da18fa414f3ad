import { IntentError } from '../errors/intent-error.js';

/**
 * The plan would delete more objects than the set's prune limit allows: nothing was written. A
 * safety stop against a commit that empties a directory by mistake; stalled until the limit is
 * raised, or the run is approved for this revision (`applyset.dev/approve-prune`).
 */
export class PruneLimitExceededError extends IntentError {
  override readonly name = 'PruneLimitExceededError';
  readonly code = 'PRUNE_LIMIT_EXCEEDED';
  readonly intent = 'stalled';
  readonly reason = 'PruneLimitExceeded';
  constructor(
    readonly limit: number,
    /** The objects the plan would delete, as kubectl names them. */
    readonly objects: readonly string[],
  ) {
    const shown = objects.slice(0, 10).join(', ');
    const more = objects.length > 10 ? ` and ${objects.length - 10} more` : '';
    super(
      `the run would prune ${objects.length} objects, over the prune limit of ${limit}; nothing was applied or pruned: ${shown}${more}`,
    );
  }
}
