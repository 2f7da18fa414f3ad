import type { ObjectContext } from './run-context.js';

/**
 * Why an object of the set was left untouched: the plan's conflict and a re-read's verdict say it
 * alike, naming the other set by its apply-config object when it can be found, else by its uid.
 */
export async function conflictMessage(
  conflict: { readonly reason: 'owned-by-other' | 'adoption-disabled'; readonly owner?: string },
  context: ObjectContext,
): Promise<string> {
  if (conflict.reason !== 'owned-by-other') {
    return 'exists without an apply-owner and adoption is disabled: left untouched';
  }
  const owner = conflict.owner;
  const parent = owner === undefined ? undefined : await context.findSetParent(owner);
  const who = parent ?? `apply-owner ${owner ?? '?'}`;
  return `owned by another set (${who}): left untouched`;
}
