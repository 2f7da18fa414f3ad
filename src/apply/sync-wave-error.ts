import { IntentError } from '../errors/intent-error.js';

/** How long a sync wave may take to become healthy when the request does not say (spec.timeout does). */
export const DEFAULT_SYNC_WAVE_TIMEOUT_MS = 5 * 60_000;

/**
 * A sync wave (applyset.dev/wave) did not become healthy: the waves after it were not applied and
 * nothing was pruned. Retried: the next run applies again from the first wave.
 */
export class SyncWaveNotHealthyError extends IntentError {
  override readonly name = 'SyncWaveNotHealthyError';
  readonly code = 'SYNC_WAVE_NOT_HEALTHY';
  readonly reason = 'SyncWaveNotHealthy';
  readonly intent = 'retryable';
  constructor(
    readonly wave: number,
    why: string,
  ) {
    super(
      `sync wave ${wave} is not healthy, so the waves after it were not applied and nothing was pruned: ${why}`,
    );
  }
}
