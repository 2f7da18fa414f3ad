/**
 * The one writer of an ApplySet's status. A reconcile makes one for the ApplySet as the server last
 * answered it; every write is conditional on the version the run knows it at (that answer, then the
 * engine's writes of the ApplySet, then this writer's own), so a newer writer (a replica that took
 * over while this one was paused, a spec change) wins and this run's view is read again.
 */
import type { HealthWait } from '../apply/apply-set-contract.js';
import type { RunStage } from '../apply/run-stage.js';
import {
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type ApplySet,
  type ApplySetStatus,
} from '../api/applyset-types.js';
import type { MapOutcomeInput } from '../api/map-reconcile-outcome.js';
import type { ApplySetView } from '../api/applyset-view.js';
import { pendingNames, progressingStatus } from '../api/progressing-status.js';
import type { JsonValue } from '../manifests/json-value.js';
import { goDeepEqual } from '../merge/go-value.js';
import type { ReconcileContext } from './reconcile-context.js';
import type { Attributes } from '@opentelemetry/api';
import { inSpan } from '../observability/trace-span.js';
import { recordStageEvent, stageMessage } from './run-stage-report.js';

/**
 * The least time between two writes of the health wait's Progressing status.
 * @internal A delay the tests advance their clock by.
 */
export const REWRITE_AFTER_MS = 15_000;

export interface StatusWriter {
  /** The engine wrote the ApplySet (its inventory) and left it at this version. */
  moved(resourceVersion: string | undefined): void;
  /** The ApplySet's newest version known (the engine's writes and this writer's): the engine goes on from it. */
  version(): string | undefined;
  /**
   * spec.wait under way: Ready Unknown, reason Progressing, naming the objects not ready yet. Without
   * it the status would keep the previous run's Ready until the wait ends, minutes later with a long
   * spec.timeout. Written when the wait starts, and again only when the objects waited for change and
   * REWRITE_AFTER_MS passed since: never on every poll. Never throws: a failed write is logged.
   * A stage of the run (a sync wave waited for, a phase of hooks) is written once as it starts, with
   * its event (run-stage-report.ts).
   */
  progressing(wait: HealthWait | RunStage, revision: string): Promise<void>;
  /**
   * The run's outcome as status, written only when it differs from the status stored (the run's
   * start, or the Progressing it wrote on its way). `conflict`: the ApplySet changed meanwhile,
   * nothing was written.
   */
  write(status: ApplySetStatus): Promise<'written' | 'unchanged' | 'conflict'>;
}

/** RFC 3339 to the second, as metav1.Time is written. */
function statusTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * What every status of the ApplySet is mapped from besides the outcome: its previous status, the
 * generation handled, the intervals to requeue on (read leniently: an invalid spec still has them, with
 * the defaults where it is wrong) and the reconcile request handled.
 */
export function mappingInputOf(
  { applySet, lenient }: ApplySetView,
  nowMs: number,
): Omit<MapOutcomeInput, 'outcome' | 'safeModes' | 'held'> {
  const { intervalMs, retryIntervalMs } = lenient;
  return {
    previous: applySet.status,
    generation: applySet.metadata.generation,
    intervalMs,
    retryIntervalMs,
    now: statusTime(nowMs),
    handledReconcileAt: applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION],
  };
}

/**
 * The engine's writes of the ApplySet and the status writer's take turns (a sync wave's status between
 * two inventory writes, the health wait's after the last): the newest version known is the last
 * written. A report that repeats the engine's version says it wrote nothing since, so it moves nothing.
 */
function parentVersions(initial: string | undefined) {
  let engineVersion: string | undefined;
  let latest: string | undefined;
  return {
    version: () => latest ?? initial,
    engineMoved: (resourceVersion: string | undefined) => {
      if (resourceVersion === undefined || resourceVersion === engineVersion) return;
      engineVersion = resourceVersion;
      latest = resourceVersion;
    },
    wrote: (resourceVersion: string | undefined) => {
      latest = resourceVersion;
    },
  };
}

export function createStatusWriter(
  ctx: Pick<ReconcileContext, 'api' | 'log' | 'metrics' | 'now' | 'signal'> &
    Partial<Pick<ReconcileContext, 'recordEvent'>>,
  applySet: ApplySet,
): StatusWriter {
  let stored = applySet.status;
  const { version, engineMoved, wrote } = parentVersions(applySet.metadata.resourceVersion);
  let progressAt = 0;
  let progressNames: string | undefined;
  // After a conflict the run's view is stale: its final write will conflict too and the ApplySet is
  // read again, so the wait writes nothing more.
  let stale = false;

  const progressing = async (wait: HealthWait | RunStage, revision: string): Promise<void> => {
    engineMoved(wait.parentResourceVersion);
    if ('stage' in wait) return staged(wait, revision);
    const names = pendingNames(wait.pending);
    const now = ctx.now();
    const due =
      progressNames === undefined || (names !== progressNames && now - progressAt >= REWRITE_AFTER_MS);
    if (stale || !due || ctx.signal.aborted) return;
    if (!(await writeProgressing(revision, wait.pending))) return;
    progressAt = now;
    progressNames = names;
  };

  /** A stage's transition: its event, and its status once (a health wait after it writes its own). */
  const staged = async (stage: RunStage, revision: string): Promise<void> => {
    recordStageEvent(ctx, applySet, stage);
    const message = stageMessage(stage, applySet.metadata.namespace);
    if (message === undefined || stale || ctx.signal.aborted) return;
    await writeProgressing(revision, [], message);
    progressNames = undefined;
  };

  type Pending = HealthWait['pending'];
  const writeProgressing = async (revision: string, pending: Pending, message?: string): Promise<boolean> => {
    const status = progressingStatus({
      previous: applySet.status,
      generation: applySet.metadata.generation,
      namespace: applySet.metadata.namespace,
      revision,
      pending,
      ...(message === undefined ? {} : { message }),
      now: statusTime(ctx.now()),
    });
    try {
      const result = await ctx.api.writeStatus(applySet, status, version(), ctx.signal);
      if (result.kind !== 'written') {
        stale = true;
        return false;
      }
      stored = status;
      wrote(result.resourceVersion);
      ctx.metrics.setReady(applySet.metadata.namespace, applySet.metadata.name, -1);
      return true;
    } catch (error) {
      // The status is a courtesy while waiting; the run's own outcome is written at its end regardless.
      ctx.log.warn({ err: error }, 'could not write the Progressing status');
      return false;
    }
  };

  const write = async (status: ApplySetStatus): Promise<'written' | 'unchanged' | 'conflict'> => {
    // A replica that lost the leadership (or is past its shutdown grace) writes nothing more.
    ctx.signal.throwIfAborted();
    // A reconcile that found nothing new writes nothing: at rest, a fleet costs the API server reads
    // only. Compared member by member, whatever order the keys came in (the stored one is the API
    // server's); lists in order.
    if (stored !== undefined && goDeepEqual(asJson(status), asJson(stored))) return 'unchanged';
    const result = await ctx.api.writeStatus(applySet, status, version(), ctx.signal);
    if (result.kind === 'conflict') return 'conflict';
    stored = status;
    if (result.kind === 'written') wrote(result.resourceVersion);
    return 'written';
  };

  return {
    moved: engineMoved,
    version,
    progressing,
    write: (status) =>
      inSpan('status.write', statusAttributes(status), async (notes) => {
        const written = await write(status);
        notes.set({ 'applyset.status.write': written });
        return written;
      }),
  };
}

function asJson(status: ApplySetStatus): JsonValue {
  return status as unknown as JsonValue;
}

/** What the status says, on its write's span: Ready and its reason, the revision applied. */
function statusAttributes(status: ApplySetStatus): Attributes {
  const ready = status.conditions?.find((condition) => condition.type === 'Ready');
  return {
    'applyset.ready': ready?.status ?? 'Unknown',
    'applyset.reason': ready?.reason ?? '',
    'applyset.revision': status.lastAppliedRevision ?? '',
  };
}
