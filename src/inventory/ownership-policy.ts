import { liveAnnotation, type LiveState } from './live-state.js';
import { MetadataKeys, PRUNE_DISABLED } from './metadata-keys.js';

export interface OwnershipPolicy {
  /** uid of our apply-config object; undefined before it is first created (then nothing is ours yet). */
  readonly ownerUid: string | undefined;
  /** Take over a live object that has no apply-owner, as kubectl apply would. Default on. */
  readonly adopt: boolean;
}

export type ApplyVerdict =
  /** `unread`: the object was not read (create-unread); the POST's refusal makes the run read it. */
  | { readonly verdict: 'create'; readonly unread?: true }
  | { readonly verdict: 'update'; readonly adopt: boolean }
  | { readonly verdict: 'conflict'; readonly reason: 'owned-by-other'; readonly owner: string }
  | { readonly verdict: 'conflict'; readonly reason: 'adoption-disabled' }
  | { readonly verdict: 'unknown'; readonly error: unknown };

/**
 * May we apply to this live object? Ours: update. No owner: adopt unless adoption is off. Another
 * set's uid: a conflict, never a write (the proposal: an object owned by another set is never
 * changed). A failed read: unknown, so not written this run.
 */
export function mayApply(live: LiveState, policy: OwnershipPolicy): ApplyVerdict {
  switch (live.status) {
    case 'absent':
      return { verdict: 'create' };
    case 'create-unread':
      return { verdict: 'create', unread: true };
    case 'unknown':
      return { verdict: 'unknown', error: live.error };
    case 'present': {
      const owner = liveAnnotation(live.object, MetadataKeys.applyOwner);
      if (owner === undefined || owner === '') {
        return policy.adopt
          ? { verdict: 'update', adopt: true }
          : { verdict: 'conflict', reason: 'adoption-disabled' };
      }
      if (owner === policy.ownerUid) return { verdict: 'update', adopt: false };
      return { verdict: 'conflict', reason: 'owned-by-other', owner };
    }
  }
}

export type PruneSkipReason =
  | 'still-desired'
  | 'not-in-inventory'
  | 'already-absent'
  | 'unknown-read'
  | 'not-owned'
  | 'owned-by-other'
  | 'prune-disabled';

export type PruneVerdict =
  | { readonly verdict: 'delete' }
  | {
      readonly verdict: 'skip';
      readonly reason: PruneSkipReason;
      readonly owner?: string;
      readonly error?: unknown;
    };

/**
 * May we delete this object? Only if it is in the old list and not in the new one, its live
 * apply-owner is our uid (anything else was taken over or never ours: the proposal's reason for the
 * annotation), and it is not annotated `applyset.dev/prune: disabled`. A failed read is "unknown",
 * never "absent".
 */
export function mayPrune(input: {
  readonly inOld: boolean;
  readonly inNew: boolean;
  readonly live: LiveState;
  readonly ownerUid: string | undefined;
}): PruneVerdict {
  const { inOld, inNew, live, ownerUid } = input;
  if (inNew) return { verdict: 'skip', reason: 'still-desired' };
  if (!inOld) return { verdict: 'skip', reason: 'not-in-inventory' };
  switch (live.status) {
    case 'unknown':
      return { verdict: 'skip', reason: 'unknown-read', error: live.error };
    case 'create-unread':
      // Only an object new to the set is left unread: never one of the inventory, never judged here.
      return { verdict: 'skip', reason: 'unknown-read', error: new Error('the object was not read') };
    case 'absent':
      return { verdict: 'skip', reason: 'already-absent' };
    case 'present': {
      const owner = liveAnnotation(live.object, MetadataKeys.applyOwner);
      if (owner === undefined || owner === '') return { verdict: 'skip', reason: 'not-owned' };
      if (ownerUid === undefined || owner !== ownerUid)
        return { verdict: 'skip', reason: 'owned-by-other', owner };
      // Case and spaces forgiven: a hand-written "Disabled" must not get the object deleted.
      if (liveAnnotation(live.object, MetadataKeys.prune)?.trim().toLowerCase() === PRUNE_DISABLED) {
        return { verdict: 'skip', reason: 'prune-disabled' };
      }
      return { verdict: 'delete' };
    }
  }
}
