import { rethrowAbort } from '../errors/rethrow-abort.js';
import PQueue from 'p-queue';
import type { Inventory } from '../inventory/inventory.js';
import { liveAnnotation, type LiveState } from '../inventory/live-state.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { objectRefKey } from '../manifests/object-ref.js';
import { KubeApiError, UnknownKindError } from '../kube/kube-api-error.js';
import { messageOf } from '../errors/message-of.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { locationIn } from './object-location.js';
import { releaseObject } from './release-object.js';
import type { RunContext } from './run-context.js';

/**
 * deletionPolicy Orphan: take this set's marks off every object it owns, one at a time through the
 * queue; an object owned by another set, or not found, is left as it is. A failure is reported per
 * object, so the caller can retry before letting the parent go.
 */
export async function releaseOwned(
  inventory: Inventory,
  live: ReadonlyMap<string, LiveState>,
  context: Pick<RunContext, 'api' | 'mapper' | 'concurrency'> & {
    readonly signal: AbortSignal | undefined;
    readonly ownerUid: string;
  },
): Promise<ObjectOutcome[]> {
  const queue = new PQueue({ concurrency: context.concurrency });
  const { signal } = context;
  const results = await queue.addAll(
    inventory.map((ref) => async (): Promise<ObjectOutcome | undefined> => {
      const state = live.get(objectRefKey(ref));
      // A release reads every object of its inventory; none is create-unread.
      if (state === undefined || state.status === 'absent' || state.status === 'create-unread')
        return undefined;
      // A kind no longer served has no objects left to release.
      if (state.status === 'unknown' && state.error instanceof UnknownKindError) return undefined;
      if (state.status === 'unknown') {
        return {
          action: 'failed',
          ref,
          message: `could not be read to release it: ${messageOf(state.error)}`,
        };
      }
      if (liveAnnotation(state.object, MetadataKeys.applyOwner) !== context.ownerUid) return undefined;
      try {
        const mapping = await context.mapper.resolveGroupKind(ref.group, ref.kind, signal);
        await releaseObject(context.api, locationIn(mapping, ref.namespace), ref.name, state.object, signal);
        return {
          action: 'prune-skipped',
          ref,
          reason: 'released: the set was let go (orphaned)',
          released: true,
        };
      } catch (error) {
        if (error instanceof KubeApiError && error.notFound) return undefined;
        rethrowAbort(error);
        return { action: 'failed', ref, message: `releasing it failed: ${messageOf(error)}`, cause: error };
      }
    }),
    signal === undefined ? {} : { signal },
  );
  return results.filter((outcome): outcome is ObjectOutcome => outcome !== undefined);
}
