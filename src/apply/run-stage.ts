/**
 * What a run tells of its order while it runs (the stages it waits in) and, in a dry run, what that
 * order would be: the sync waves and hooks (docs/hooks.md).
 */
import type { ObjectRef } from '../manifests/object-ref.js';
import type { Hook, HookPhase } from './hooks/hook-annotations.js';

/** The order a run would follow: what the preview lists by wave and the hooks it would run. */
export interface RunOrder {
  readonly syncWaves: readonly { readonly wave: number; readonly refs: readonly ObjectRef[] }[];
  readonly hooks: readonly Hook[];
}

/**
 * Where a run is while it waits on what the set's author ordered (docs/hooks.md): a sync wave not
 * healthy yet, a sync wave that became healthy, a phase of hooks started. Reported once per transition
 * (never per poll), as data; the controller shows it in the ApplySet's status and events.
 */
export type RunStage = EngineStage & {
  /** The parent's resourceVersion after the run's writes so far: a status write's precondition. */
  readonly parentResourceVersion: string | undefined;
};

/** A stage as the engine's steps report it; the engine adds the parent's version. */
export type EngineStage =
  /** The wave is applied and its first health poll left these objects not Current. */
  | ({ readonly stage: 'sync-wave-waiting'; readonly pending: readonly ObjectHealthReport[] } & SyncWavePlace)
  /** Every object of the wave is Current: the next wave is applied now. */
  | ({ readonly stage: 'sync-wave-healthy'; readonly objects: number } & SyncWavePlace)
  /** A phase of hooks starts: the hooks it runs, lightest weight first. */
  | { readonly stage: 'hook-phase'; readonly phase: HookPhase; readonly hooks: readonly ObjectRef[] };

/** A sync wave's place: its number, its position among the set's waves (1-based), how many there are. */
interface SyncWavePlace {
  readonly wave: number;
  readonly position: number;
  readonly waves: number;
  /** The wave applied once this one is healthy. */
  readonly next: number;
}

/** One object's health after a wait: kstatus's status and what a person should read. */
export interface ObjectHealthReport {
  readonly ref: ObjectRef;
  readonly status: 'Current' | 'InProgress' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';
  readonly message: string;
}
