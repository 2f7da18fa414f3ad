/** Exit codes shared by every subcommand, so scripts can tell the outcomes apart. */
export const ExitCode = {
  ok: 0,
  /** Some objects failed (API errors, conflicts); the rest was applied. */
  partialFailure: 1,
  /** The input was invalid (bad flags, bad YAML, unknown kind): nothing was written. */
  badInput: 2,
  /** The tool itself failed unexpectedly (cluster unreachable, internal error). */
  failure: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
