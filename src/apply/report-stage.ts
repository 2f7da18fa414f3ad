import { liveResourceVersion } from '../inventory/live-state.js';
import type { ApplySetRequest } from './apply-set-contract.js';
import type { EngineStage } from './run-stage.js';
import type { ParentWriter } from './parent-writer.js';

/** How the engine's steps report a stage of the run (a sync wave, a phase of hooks). */
export type StageReporter = (stage: EngineStage) => Promise<void>;

/**
 * The request's `onStage` with the parent's version as the run's writes left it; a status write of the
 * listener moves the parent on, and the run's next write of the parent is conditional on that version
 * (parent-writer.ts compares and swaps on resourceVersion).
 */
export function stageReporter(
  request: Pick<ApplySetRequest, 'onStage'>,
  writer: Pick<ParentWriter, 'live' | 'moved'>,
): StageReporter {
  const { onStage } = request;
  if (onStage === undefined) return async () => {};
  return async (stage) => {
    const live = writer.live();
    const parentResourceVersion = live === undefined ? undefined : liveResourceVersion(live);
    const moved = await onStage({ ...stage, parentResourceVersion });
    if (moved !== undefined) writer.moved(moved);
  };
}
