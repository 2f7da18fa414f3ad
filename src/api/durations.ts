/**
 * The durations of the ApplySet spec and of the command line (`interval`, `--timeout`): the text the
 * CRD's pattern accepts, read as Go's time.ParseDuration reads it.
 */

/**
 * The CRD's pattern for interval, retryInterval and timeout: a subset of Go's time.ParseDuration.
 * @internal The CRD test holds crds/ to the same pattern.
 */
export const DURATION_PATTERN = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;

export class InvalidDurationError extends Error {
  override readonly name = 'InvalidDurationError';
  readonly code = 'INVALID_DURATION';

  constructor(readonly text: string) {
    super(
      `invalid duration ${JSON.stringify(text)}: expected a sequence of numbers with units ms, s, m or h, such as 1m30s`,
    );
  }
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_TERM = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g;

/**
 * Parses the durations the CRD accepts (`300ms`, `1.5h`, `1m30s`) into whole milliseconds, the way Go's
 * time.ParseDuration reads the same text, so the API server's view and ours agree.
 */
export function parseDuration(text: string): number {
  if (!DURATION_PATTERN.test(text)) throw new InvalidDurationError(text);
  let total = 0;
  for (const match of text.matchAll(DURATION_TERM)) {
    const [, amount, unit] = match;
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  if (!Number.isFinite(total)) throw new InvalidDurationError(text);
  return Math.round(total);
}
