/**
 * The status an ApplySet shows while spec.wait waits for its objects to become healthy: Ready Unknown
 * with reason Progressing (kstatus reads it as InProgress), naming what is not ready yet. Written once
 * the apply is done and the health wait starts, so `kubectl get` tells "still rolling out" apart from
 * the HealthCheckFailed that only the timeout produces. Pure: the controller writes what this returns.
 */

import { objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import type { ApplySetCondition, ApplySetConditionType, ApplySetStatus } from './applyset-types.js';
import { withTransition } from './map-reconcile-outcome.js';
import { carriedSafeModeConditions } from './safe-mode-status.js';

const PROGRESSING_REASON = 'Progressing';

/** Objects named in the message before the rest is only counted. */
const OBJECTS_SHOWN = 5;

/** One object the wait still waits for, and kstatus's words for why. */
interface PendingObject {
  readonly ref: ObjectRef;
  readonly message: string;
}

interface ProgressingInput {
  readonly previous: ApplySetStatus | undefined;
  readonly generation: number | undefined;
  /** The ApplySet's namespace: objects of another one are named with theirs. */
  readonly namespace: string;
  /** The revision just applied. */
  readonly revision: string;
  readonly pending: readonly PendingObject[];
  /** What the run waits in, when it is not the health wait's objects (a sync wave, a phase of hooks). */
  readonly message?: string;
  /** RFC 3339. */
  readonly now: string;
}

/**
 * The previous status with Ready Unknown, Reconciling True and Stalled False, all reason Progressing;
 * the counts of the previous run are kept until the run's own outcome replaces them.
 */
export function progressingStatus(input: ProgressingInput): ApplySetStatus {
  const message = input.message ?? progressingMessage(input.pending, input.namespace);
  const generation = input.generation === undefined ? {} : { observedGeneration: input.generation };
  const condition = (type: ApplySetConditionType, status: ApplySetCondition['status']) =>
    withTransition(
      { type, status, reason: PROGRESSING_REASON, message, lastTransitionTime: input.now, ...generation },
      input.previous?.conditions,
    );
  return {
    ...input.previous,
    ...generation,
    conditions: [
      condition('Ready', 'Unknown'),
      condition('Reconciling', 'True'),
      condition('Stalled', 'False'),
      ...carriedSafeModeConditions(input.previous),
    ],
    lastAttemptedRevision: input.revision,
    // Errors of an earlier run are not this run's: the objects waited for are named in the message.
    errors: { items: [], totalCount: 0, truncated: false },
  };
}

/**
 * `waiting for deployment.apps/web: 0 of 3 replicas available; …; and 4 more`.
 */
export function progressingMessage(pending: readonly PendingObject[], namespace: string): string {
  const shown = pending
    .slice(0, OBJECTS_SHOWN)
    .map((object) => `${nameOf(object.ref, namespace)}: ${object.message}`);
  const more = pending.length > OBJECTS_SHOWN ? `; and ${pending.length - OBJECTS_SHOWN} more` : '';
  return `waiting for ${shown.join('; ')}${more}`;
}

/** kubectl's `kind.group/name`, with the namespace only when it is not the ApplySet's own. */
function nameOf(ref: ObjectRef, namespace: string): string {
  const type = ref.group === '' ? ref.kind.toLowerCase() : `${ref.kind.toLowerCase()}.${ref.group}`;
  const where = ref.namespace === '' || ref.namespace === namespace ? '' : ` (namespace ${ref.namespace})`;
  return `${type}/${ref.name}${where}`;
}

/** The names of the pending objects, sorted: a change of this list is worth a new status write. */
export function pendingNames(pending: readonly PendingObject[]): string {
  return pending
    .map((object) => objectRefKey(object.ref))
    .sort()
    .join('\n');
}
