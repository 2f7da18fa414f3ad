import { objectRefKey } from '../manifests/object-ref.js';
import type { ApplyAction } from '../plan/plan.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { ObjectOutcome } from './apply-set-contract.js';

/**
 * An object new to the inventory whose apply failed without anything being written: its read failed
 * (no write was sent), or the server refused the write outright (a 4xx: forbidden, invalid, a
 * conflict). Nothing of ours can exist under that name, so it leaves the inventory at the narrow step
 * instead of becoming a prune candidate that a set without the right to read it could never judge.
 * A timeout, a 5xx or a lost connection may have written it: such an object stays.
 */
export function neverWritten(
  action: ApplyAction,
  outcome: ObjectOutcome,
  inventoryOld: ReadonlySet<string>,
): boolean {
  if (inventoryOld.has(objectRefKey(action.ref))) return false;
  // Another set's (or adoption refused): judged after a create the server refused, nothing written.
  if (outcome.action === 'conflict') return true;
  if (outcome.action !== 'failed') return false;
  if (action.type === 'unknown-read') return true;
  const cause = outcome.cause;
  return cause instanceof KubeApiError && cause.status >= 400 && cause.status < 500 && cause.status !== 429;
}
