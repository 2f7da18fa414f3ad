import { parseDuration } from '../api/durations.js';
import { parseSourceHostList } from '../net/host-list.js';
import { DISPATCHER_DEFAULTS, type DispatcherSettings } from '../notify/notification-dispatcher.js';
import { UsageError } from './parse-command-line.js';

/** How notifications are delivered: parseArgs options, parsed below. */
export const NOTIFICATION_OPTIONS = {
  'notification-rate': { type: 'string' },
  'notification-timeout': { type: 'string' },
  'notification-attempts': { type: 'string' },
  'notification-queue-length': { type: 'string' },
  'internal-notification-hosts': { type: 'string' },
} as const;

export const NOTIFICATION_USAGE = `Notifications (docs/notifications.md): each receiver is sent at most --notification-rate messages
a second (1), one request may take --notification-timeout (10s), a message is tried
--notification-attempts times (4) with backoff, and --notification-queue-length messages (100) may
wait per receiver; more are dropped and counted. --cluster-name names the cluster in messages and
commit-status contexts (in-cluster). A Notification may not send to loopback, the controller's own or
private (cluster-internal) addresses, a ClusterNotification not to loopback or the controller's own,
unless --internal-notification-hosts (HOST[:PORT],...) names the host; link-local and cloud metadata
addresses are refused to both.
`;

type NotificationFlag = keyof typeof NOTIFICATION_OPTIONS;

/** What the flags set of the dispatcher: today's defaults when a flag is not given. */
export function notificationSettings(values: Partial<Record<NotificationFlag, string>>): DispatcherSettings {
  const timeout = values['notification-timeout'];
  let timeoutMs: number = DISPATCHER_DEFAULTS.timeoutMs;
  if (timeout !== undefined) {
    try {
      timeoutMs = parseDuration(timeout);
    } catch {
      throw new UsageError(`--notification-timeout: not a duration: ${JSON.stringify(timeout)} (e.g. 10s)`);
    }
    if (timeoutMs <= 0) throw new UsageError('--notification-timeout must be longer than 0s');
  }
  return {
    perSecond: count(values, 'notification-rate', DISPATCHER_DEFAULTS.perSecond),
    timeoutMs,
    attempts: count(values, 'notification-attempts', DISPATCHER_DEFAULTS.attempts),
    queueLimit: count(values, 'notification-queue-length', DISPATCHER_DEFAULTS.queueLimit),
    internalHosts: parseSourceHostList(values['internal-notification-hosts'] ?? ''),
  };
}

/** A whole number of at least 1: a rate of 0 or a queue of none would silently send nothing. */
function count(
  values: Partial<Record<NotificationFlag, string>>,
  flag: NotificationFlag,
  fallback: number,
): number {
  const value = values[flag];
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw new UsageError(`--${flag} must be a whole number of at least 1, got "${value}"`);
  }
  return number;
}
