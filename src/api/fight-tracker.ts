/*
 * Fight detection: an object the controller has to correct on run after run, on a revision and spec
 * it already applied, is being changed back by someone else (another controller, an operator, a
 * person). Three corrections in a row make a fight; a run that corrects nothing for the object ends it.
 */

/**
 * Corrections in a row that make a fight.
 * @internal A count the tests assert against.
 */
export const FIGHT_RUNS = 3;

/** One object the run changed back, with the fields it changed. */
export interface Correction {
  /** `namespace:group:kind:name`. */
  readonly object: string;
  readonly fields: readonly string[];
}

interface FightStreak {
  readonly runs: number;
  /** Every field corrected during the streak, sorted. */
  readonly fields: readonly string[];
}

export interface FightVerdict {
  readonly streaks: ReadonlyMap<string, FightStreak>;
  /** The objects at FIGHT_RUNS or more corrections in a row. */
  readonly fighting: readonly Correction[];
  /** Those that reached FIGHT_RUNS on this run: each is reported once per fight. */
  readonly newlyFighting: readonly Correction[];
}

/**
 * One more run whose corrections are `corrections`: streaks grow, or end for what was not corrected.
 * @internal A pure step the tests exercise alone.
 */
export function countFights(
  previous: ReadonlyMap<string, FightStreak>,
  corrections: readonly Correction[],
): FightVerdict {
  const streaks = new Map<string, FightStreak>();
  for (const correction of corrections) {
    const before = previous.get(correction.object);
    const fields = [...new Set([...(before?.fields ?? []), ...correction.fields])].sort();
    streaks.set(correction.object, { runs: (before?.runs ?? 0) + 1, fields });
  }
  return { streaks, ...fightsIn(streaks) };
}

function fightsIn(streaks: ReadonlyMap<string, FightStreak>): Omit<FightVerdict, 'streaks'> {
  const fighting: Correction[] = [];
  const newlyFighting: Correction[] = [];
  for (const [object, streak] of [...streaks].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (streak.runs < FIGHT_RUNS) continue;
    fighting.push({ object, fields: streak.fields });
    if (streak.runs === FIGHT_RUNS) newlyFighting.push({ object, fields: streak.fields });
  }
  return { fighting, newlyFighting };
}

/**
 * The streaks of every ApplySet this controller reconciles, in memory: a restarted controller or a
 * new leader starts counting again, which delays a report but never invents one.
 */
export interface FightTracker {
  /** A run of a revision and spec already applied, with what it corrected. */
  observe(applySet: string, corrections: readonly Correction[]): FightVerdict;
  /** The fights as last counted, for a run that does not count (a new revision, a failure). */
  current(applySet: string): Omit<FightVerdict, 'streaks'>;
  forget(applySet: string): void;
}

export function createFightTracker(): FightTracker {
  const byApplySet = new Map<string, ReadonlyMap<string, FightStreak>>();
  return {
    observe(applySet, corrections) {
      const verdict = countFights(byApplySet.get(applySet) ?? new Map(), corrections);
      if (verdict.streaks.size === 0) byApplySet.delete(applySet);
      else byApplySet.set(applySet, verdict.streaks);
      return verdict;
    },
    current(applySet) {
      const { fighting } = fightsIn(byApplySet.get(applySet) ?? new Map());
      return { fighting, newlyFighting: [] };
    },
    forget(applySet) {
      byApplySet.delete(applySet);
    },
  };
}
