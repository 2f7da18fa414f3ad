/**
 * What the ApplySet says of a run's stage (docs/hooks.md#what-the-status-says): the Progressing
 * message of a sync wave waited for or a phase of hooks running, and the event of a wave waited for
 * or healthy. One status write and at most one event per transition, never per poll.
 */
import type { RunStage } from '../apply/apply-set-contract.js';
import { progressingMessage } from '../api/progressing-status.js';
import { describeObjectRef } from '../manifests/object-ref.js';
import type { ReconcileEvent } from '../api/reconcile-outcome.js';

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

/** The event of a stage: a sync wave waited for (SyncWaveProgressing) or healthy (SyncWaveHealthy). */
export function stageEvent(stage: RunStage, namespace: string): ReconcileEvent | undefined {
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
