import { DEFAULT_MEMBER_WATCHES, MAX_MEMBER_WATCHES } from '../controller/member-watches.js';
import type { ControllerConfig } from '../controller/runtime/controller-config.js';
import { UsageError } from './parse-command-line.js';

/** The watches of the objects many ApplySets hold (member-watches.ts): parseArgs options, parsed below. */
export const MEMBER_WATCH_OPTIONS = {
  'member-watches': { type: 'string', default: String(DEFAULT_MEMBER_WATCHES.maxWatches) },
  'member-watch-min-sets': { type: 'string', default: String(DEFAULT_MEMBER_WATCHES.minSets) },
} as const;

type MemberWatchFlagValues = Readonly<Record<keyof typeof MEMBER_WATCH_OPTIONS, string>>;

/** `--member-watches` (0 to MAX_MEMBER_WATCHES: 0 turns them off) and `--member-watch-min-sets`. */
export function memberWatchFlags(
  values: MemberWatchFlagValues,
): NonNullable<ControllerConfig['memberWatches']> {
  const count = (flag: 'member-watches' | 'member-watch-min-sets', least: number, most: number): number => {
    const given = values[flag];
    const value = Number(given);
    if (!/^\d+$/.test(given) || value < least || value > most) {
      throw new UsageError(
        `--${flag} must be a whole number from ${least} to ${most}, got ${JSON.stringify(given)}`,
      );
    }
    return value;
  };
  return {
    maxWatches: count('member-watches', 0, MAX_MEMBER_WATCHES),
    minSets: count('member-watch-min-sets', 1, 100_000),
  };
}
