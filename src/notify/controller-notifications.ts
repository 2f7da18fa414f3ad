import type { KubeClient } from '../kube/kube-client.js';
import type { ControllerMetrics } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import { createNotificationDispatcher, type DispatcherSettings } from './notification-dispatcher.js';
import type { NotificationObjects } from './notification-objects.js';
import { createNotifier, type Notifier } from './notifier.js';
import { createInstallationTokens } from '../github-app/installation-tokens.js';

/**
 * The controller's notifications: one dispatcher for every Notification, its results counted in
 * `applyset_notifications_total`, stopped (queued messages dropped) when the controller stops.
 */
export function controllerNotifications(options: {
  readonly client: KubeClient;
  readonly readerAs: (user: string | undefined) => KubeClient;
  readonly cluster: string;
  /** The controller's own namespace, where ClusterNotifications' Secrets are. */
  readonly controllerNamespace: string;
  /** The flags' rate, timeout, attempts and queue length; the dispatcher's defaults otherwise. */
  readonly settings?: DispatcherSettings;
  /** Where Notifications are read (the controller's informers); a LIST each time otherwise. */
  readonly objects?: NotificationObjects;
  readonly metrics: Pick<ControllerMetrics, 'countNotification'>;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}): Notifier {
  const log = options.logger.child({ component: 'notifications' });
  const count = options.metrics.countNotification;
  const dispatcher = createNotificationDispatcher({
    ...options.settings,
    count,
    // The receiver is named by its Notification; its address, often a credential, never is.
    warn: (receiver, message) => log.warn({ notification: receiver }, message),
  });
  options.signal.addEventListener('abort', () => dispatcher.close(), { once: true });
  // Installation tokens of GitHub Apps, asked of their API under the receivers' host policy.
  const githubApps = {
    tokens: createInstallationTokens(),
    internalHosts: options.settings?.internalHosts ?? [],
  };
  return createNotifier({ ...options, dispatcher, githubApps, now: Date.now, log, count });
}
