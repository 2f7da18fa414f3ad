/**
 * Which seeds a differential run takes. A fixed window keeps CI comparable from run to run; a rotating
 * batch, derived from the UTC date, makes each day's runs explore sequences no run has tried before,
 * while any one day stays reproducible (the batch's first seed is printed; `DIFF_SEED` replays it).
 */
export const FIXED_BASE_SEED = 20250605;
export const FIXED_SEQUENCES = 210;
export const ROTATING_SEQUENCES = 21;

// Rotating seeds live far above the fixed window, 1000 per day, so no day's batch reaches another's.
const ROTATING_ORIGIN = 100_000_000;
const SEEDS_PER_DAY = 1000;
const MS_PER_DAY = 86_400_000;

export interface SeedBatch {
  readonly label: string;
  readonly seeds: readonly number[];
}

/** The first seed of the batch for the UTC day of `date`. */
export function rotatingBaseSeed(date: Date): number {
  return ROTATING_ORIGIN + Math.floor(date.getTime() / MS_PER_DAY) * SEEDS_PER_DAY;
}

function seedRange(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => base + i);
}

/**
 * The batches of one run, from the environment:
 * - `DIFF_SEED` / `DIFF_SEQUENCES` move or size the fixed window (a replay sets both);
 * - `DIFF_ROTATING_SEQUENCES` sizes the day's batch (0 turns it off; off by default when `DIFF_SEED`
 *   is set, so a replay runs exactly the seeds asked for);
 * - `DIFF_ROTATING_SEED` pins the batch's first seed, to replay another day's batch.
 */
export function planSeedBatches(env: NodeJS.ProcessEnv, now: Date): SeedBatch[] {
  const replaying = env.DIFF_SEED !== undefined;
  const fixedBase = Number(env.DIFF_SEED ?? FIXED_BASE_SEED);
  const fixedCount = Number(env.DIFF_SEQUENCES ?? FIXED_SEQUENCES);
  const rotatingCount = Number(env.DIFF_ROTATING_SEQUENCES ?? (replaying ? 0 : ROTATING_SEQUENCES));
  if (rotatingCount > SEEDS_PER_DAY) throw new Error(`DIFF_ROTATING_SEQUENCES is at most ${SEEDS_PER_DAY}`);
  const rotatingBase = Number(env.DIFF_ROTATING_SEED ?? rotatingBaseSeed(now));
  const batches: SeedBatch[] = [
    {
      label: `fixed seeds ${fixedBase}..${fixedBase + fixedCount - 1}`,
      seeds: seedRange(fixedBase, fixedCount),
    },
  ];
  if (rotatingCount > 0) {
    const day = env.DIFF_ROTATING_SEED === undefined ? ` (${now.toISOString().slice(0, 10)})` : '';
    batches.push({
      label: `rotating seeds ${rotatingBase}..${rotatingBase + rotatingCount - 1}${day}`,
      seeds: seedRange(rotatingBase, rotatingCount),
    });
  }
  return batches;
}
