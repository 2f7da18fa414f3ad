/**
 * What the ApplySet says of a run's stage (docs/hooks.md#what-the-status-says): the Progressing
 * message of a sync wave waited for or a phase of hooks running, and the event of a wave waited for
 * or healthy. One status write and at most one event per transition, never per poll.
 */
import type { RunStage } from '../apply/run-stage.js';
import { progressingMessage } from '../api/progressing-status.js';
import { describeObjectRef } from '../manifests/object-ref.js';
import type { ApplySet } from '../api/applyset-types.js';
import type { ReconcileEvent } from '../api/reconcile-outcome.js';
import { subjectOf } from '../kube/applyset-api.js';
import type { ReconcileContext } from './reconcile-context.js';

/** The Progressing message of a stage worth a status write; undefined for one that is not. */
export function stageMessage(stage: RunStage, namespace: string): string | undefined {
  switch (stage.stage) {
    case 'sync-wave-waiting':
      return `${waveName(stage)} applied; wave ${stage.next} waits until it is healthy: ${progressingMessage(stage.pending, namespace)}`;
    case 'hook-phase': {
      const shown = stage.hooks.slice(0, 5).map(describeObjectRef).join(', ');
      const more = stage.hooks.length > 5 ? ` and ${stage.hooks.length - 5} more` : '';
      return `running ${stage.phase} hooks: ${shown}${more}`;
    }
    case 'sync-wave-healthy':
      return undefined;
  }
}

/** Sends the stage's event in the background: a slow API server does not hold the run. */
export function recordStageEvent(
  ctx: Pick<ReconcileContext, 'log'> & Partial<Pick<ReconcileContext, 'recordEvent'>>,
  applySet: ApplySet,
  stage: RunStage,
): void {
  const event = stageEvent(stage, applySet.metadata.namespace);
  if (event === undefined) return;
  ctx.recordEvent?.(subjectOf(applySet), event).catch((error: unknown) => {
    ctx.log.warn({ err: error, reason: event.reason }, 'could not record a stage event');
  });
}

/** The event of a stage: a sync wave waited for (SyncWaveProgressing) or healthy (SyncWaveHealthy). */
function stageEvent(stage: RunStage, namespace: string): ReconcileEvent | undefined {
  switch (stage.stage) {
    case 'sync-wave-waiting':
      return {
        type: 'Normal',
        reason: 'SyncWaveProgressing',
        message: `${waveName(stage)} applied, waiting for it to be healthy before wave ${stage.next}: ${progressingMessage(stage.pending, namespace)}`,
      };
    case 'sync-wave-healthy':
      return {
        type: 'Normal',
        reason: 'SyncWaveHealthy',
        message: `${waveName(stage)} is healthy (${stage.objects} objects); applying wave ${stage.next}`,
      };
    case 'hook-phase':
      // Each hook's end has its own event (HookSucceeded, HookFailed).
      return undefined;
  }
}

/** `sync wave 0 (1 of 3)`. */
function waveName(stage: { wave: number; position: number; waves: number }): string {
  return `sync wave ${stage.wave} (${stage.position} of ${stage.waves})`;
}
