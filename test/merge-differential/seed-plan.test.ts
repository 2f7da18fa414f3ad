import {
  FIXED_BASE_SEED,
  FIXED_SEQUENCES,
  planSeedBatches,
  ROTATING_SEQUENCES,
  rotatingBaseSeed,
} from './seed-plan.js';

describe('differential seed plan', () => {
  const day = new Date('2025-07-01T10:00:00Z');

  it('keeps the fixed window and adds a batch for the day', () => {
    const [fixed, rotating] = planSeedBatches({}, day);
    expect(fixed?.seeds[0]).toBe(FIXED_BASE_SEED);
    expect(fixed?.seeds).toHaveLength(FIXED_SEQUENCES);
    expect(rotating?.seeds).toHaveLength(ROTATING_SEQUENCES);
    expect(rotating?.seeds[0]).toBe(rotatingBaseSeed(day));
    expect(rotating?.label).toContain(`rotating seeds ${rotatingBaseSeed(day)}..`);
    expect(rotating?.label).toContain('2025-07-01');
  });

  it('gives the same batch all day and another one the next day, never inside the fixed window', () => {
    const later = new Date('2025-07-01T23:59:59Z');
    const next = new Date('2025-07-02T00:00:00Z');
    expect(rotatingBaseSeed(later)).toBe(rotatingBaseSeed(day));
    expect(rotatingBaseSeed(next) - rotatingBaseSeed(day)).toBe(1000);
    expect(rotatingBaseSeed(day)).toBeGreaterThan(FIXED_BASE_SEED + FIXED_SEQUENCES);
  });

  it('runs only the asked-for seeds when replaying', () => {
    const batches = planSeedBatches({ DIFF_SEED: '120270005', DIFF_SEQUENCES: '1' }, day);
    expect(batches).toEqual([{ label: 'fixed seeds 120270005..120270005', seeds: [120270005] }]);
  });

  it('replays another day with DIFF_ROTATING_SEED, or turns the batch off', () => {
    const [, rotating] = planSeedBatches({ DIFF_ROTATING_SEED: '7', DIFF_ROTATING_SEQUENCES: '2' }, day);
    expect(rotating).toEqual({ label: 'rotating seeds 7..8', seeds: [7, 8] });
    expect(planSeedBatches({ DIFF_ROTATING_SEQUENCES: '0' }, day)).toHaveLength(1);
  });
});
