import type { ApplySet } from '../api/applyset-types.js';
import { messageOf } from '../errors/message-of.js';
import { computeObjectHealth } from '../health/compute-object-health.js';
import { inventoryRefs } from './inventory-tree.js';
import type { UiObjectReader, UiObjectRef, UiObjectState } from './ui-data.js';

/** Reads at a time: a page of a large set must not open hundreds of requests at once. */
const CONCURRENCY = 8;

/**
 * The health of the set's objects by kstatus's rules, read live through the reader the caller gave for
 * this ApplySet; the first `limit` of its inventory only. An object that cannot be read says why
 * rather than failing the page.
 */
export async function readObjectStates(
  applySet: ApplySet,
  reader: UiObjectReader,
  limit: number,
  signal?: AbortSignal,
): Promise<UiObjectState[]> {
  const refs = inventoryRefs(applySet).refs.slice(0, limit);
  const states: UiObjectState[] = new Array<UiObjectState>(refs.length);
  let next = 0;
  const work = async () => {
    for (let index = next++; index < refs.length; index = next++) {
      const ref = refs[index] as UiObjectRef;
      try {
        const health = computeObjectHealth(await reader(ref, signal));
        states[index] = { ...ref, health: health.status, message: health.message };
      } catch (error) {
        states[index] = { ...ref, health: 'Unknown', message: `cannot be read: ${messageOf(error)}` };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, refs.length) }, work));
  return states;
}
