/** The controller's duration flags (`15s`, `1m30s`), each refused by name when it is not one. */
import { parseDuration } from '../api/durations.js';
import type { ControllerConfig } from '../controller/runtime/controller-config.js';
import { messageOf } from '../errors/message-of.js';
import { UsageError } from './parse-command-line.js';

type DurationFlag =
  | 'lease-duration'
  | 'renew-deadline'
  | 'retry-period'
  | 'shutdown-grace'
  | 'shared-fetch-max-age';

/** The leader election's timings, the shutdown grace and the shared fetch's age. */
export function durationFlags(
  values: Readonly<Record<DurationFlag, string>>,
): Pick<
  ControllerConfig,
  'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'shutdownGraceMs' | 'sharedFetchMaxAgeMs'
> {
  const duration = (flag: DurationFlag) => {
    try {
      return parseDuration(values[flag]);
    } catch (error) {
      throw new UsageError(`--${flag}: ${messageOf(error)}`);
    }
  };
  return {
    leaseDurationMs: duration('lease-duration'),
    renewDeadlineMs: duration('renew-deadline'),
    retryPeriodMs: duration('retry-period'),
    shutdownGraceMs: duration('shutdown-grace'),
    sharedFetchMaxAgeMs: duration('shared-fetch-max-age'),
  };
}
