import { messageOf } from '../errors/message-of.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import { setTimeout as delay } from 'node:timers/promises';
import { computeObjectHealth, type ObjectHealth } from '../health/compute-object-health.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import type { WaitRequest } from './apply-set-contract.js';
import type { ObjectHealthReport } from './run-stage.js';
import { locationIn } from './object-location.js';
import type { RunContext } from './run-context.js';
import { inSpan } from '../observability/trace-span.js';

const DEFAULT_POLL_MS = 1_000;

/**
 * After a run, waits until every object is Current (by the request's health judge, else kstatus's
 * rules), one has Failed, or the deadline passes: short polls of each object not Current yet (GETs, never a re-apply).
 * `onReady` hears of each object as it becomes Current. Resolves with the last health of every object.
 */
export async function waitForHealth(
  refs: readonly ObjectRef[],
  context: Pick<RunContext, 'api' | 'mapper' | 'healthOf'>,
  signal: AbortSignal | undefined,
  options: Pick<WaitRequest, 'timeoutMs' | 'deadline' | 'pollMs' | 'onReady'> & {
    /** Hears the objects still waited for after each poll that leaves some. */
    readonly onPending?: (pending: readonly ObjectHealthReport[]) => Promise<void>;
  },
): Promise<HealthWait> {
  return inSpan('health.wait', { 'health.objects': refs.length }, async (notes) => {
    const waited = await pollHealth(refs, context, signal, options);
    const current = waited.health.filter((report) => report.status === 'Current').length;
    notes.set({ 'health.current': current, 'health.timed_out': waited.timedOut });
    return waited;
  });
}

interface HealthWait {
  readonly health: readonly ObjectHealthReport[];
  readonly timedOut: boolean;
}

async function pollHealth(
  refs: readonly ObjectRef[],
  context: Pick<RunContext, 'api' | 'mapper'>,
  signal: AbortSignal | undefined,
  options: Parameters<typeof waitForHealth>[3],
): Promise<HealthWait> {
  const deadline = Math.min(Date.now() + options.timeoutMs, options.deadline ?? Infinity);
  const latest = new Map<ObjectRef, ObjectHealth>();
  let pending = [...refs];
  for (;;) {
    const still: ObjectRef[] = [];
    for (const ref of pending) {
      const health = await readHealth(ref, context, signal);
      latest.set(ref, health);
      if (health.status === 'Current') options.onReady?.(ref);
      else still.push(ref);
    }
    pending = still;
    const failed = pending.some((ref) => latest.get(ref)?.status === 'Failed');
    if (pending.length === 0 || failed || Date.now() >= deadline) {
      return {
        health: refs.map((ref) => ({ ref, ...(latest.get(ref) ?? { status: 'NotFound', message: '' }) })),
        timedOut: pending.length > 0 && !failed,
      };
    }
    await options.onPending?.(
      pending.map((ref) => ({ ref, ...(latest.get(ref) ?? { status: 'NotFound', message: '' }) })),
    );
    // The last poll falls on the deadline, not a poll interval past it.
    const pause = Math.max(0, Math.min(options.pollMs ?? DEFAULT_POLL_MS, deadline - Date.now()));
    await delay(pause, undefined, signal === undefined ? {} : { signal });
  }
}

async function readHealth(
  ref: ObjectRef,
  context: Pick<RunContext, 'api' | 'mapper' | 'healthOf'>,
  signal: AbortSignal | undefined,
): Promise<ObjectHealth> {
  try {
    const mapping = await context.mapper.resolveGroupKind(ref.group, ref.kind, signal);
    const object = await context.api.get(locationIn(mapping, ref.namespace), ref.name, signal);
    return (context.healthOf ?? computeObjectHealth)(object);
  } catch (error) {
    rethrowAbort(error);
    return {
      status: 'InProgress',
      message: `could not be read: ${messageOf(error)}`,
    };
  }
}
