import type { ApplySet } from '../api/applyset-types.js';
import { messageOf } from '../errors/message-of.js';
import { resolveHealthCheckExprs } from '../api/resolve-health-check-exprs.js';
import { healthJudge, mergeHealthCheckExprs, type HealthCheckExpr } from '../health/cel-health.js';
import { inventoryRefs } from './inventory-tree.js';
import type { UiObjectReader, UiObjectRef, UiObjectState } from './ui-data.js';

/** Reads at a time: a page of a large set must not open hundreds of requests at once. */
const CONCURRENCY = 8;

/**
 * The health of the set's objects as the controller judges it, read live through the reader the caller
 * gave for this ApplySet; the first `limit` of its inventory only. A kind with a CEL check (the set's
 * spec.healthCheckExprs, else the cluster's default `defaults`) by its expressions, any other by
 * kstatus's rules. An object that cannot be read says why rather than failing the page.
 */
export async function readObjectStates(
  applySet: ApplySet,
  reader: UiObjectReader,
  limit: number,
  defaults: readonly HealthCheckExpr[] = [],
  signal?: AbortSignal,
): Promise<UiObjectState[]> {
  // An entry that does not parse was refused when the controller read the set (InvalidSpec); here it
  // is left out, its kind judged by kstatus's rules, rather than failing the page.
  const own = resolveHealthCheckExprs(
    applySet.spec.healthCheckExprs,
    'spec.healthCheckExprs',
    () => undefined,
  );
  const judge = healthJudge(mergeHealthCheckExprs(defaults, own));
  const refs = inventoryRefs(applySet).refs.slice(0, limit);
  const states: UiObjectState[] = new Array<UiObjectState>(refs.length);
  let next = 0;
  const work = async () => {
    for (let index = next++; index < refs.length; index = next++) {
      const ref = refs[index] as UiObjectRef;
      try {
        const health = judge(await reader(ref, signal));
        states[index] = { ...ref, health: health.status, message: health.message };
      } catch (error) {
        states[index] = { ...ref, health: 'Unknown', message: `cannot be read: ${messageOf(error)}` };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, refs.length) }, work));
  return states;
}
