import type { KubeClient } from '../../kube/kube-client.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import { raceSignal } from '../../git/abortable-http-client.js';
import { notificationPaths, type NotificationObjects } from '../../notify/notification-objects.js';
import { startSupervisedInformer, type SupervisedInformer } from '../../kube/supervised-informer.js';
import { controllerNotifications } from '../../notify/controller-notifications.js';
import type { Notifier } from '../../notify/notifier.js';
import type { ControllerMetrics } from '../../observability/controller-metrics.js';
import type { Logger } from '../../observability/create-logger.js';
import type { ControllerClients } from './controller-clients.js';
import type { ControllerConfig } from './controller-config.js';
import type { InformerLogger } from '../../kube/watch-once.js';

/**
 * Notifications and ClusterNotifications as the controller's informers hold them: one LIST and one
 * WATCH of each for the controller's life, none per change of state. What the notifier reads is as
 * fresh as the watch (milliseconds behind the API server; a new Notification gets the next change).
 * A read waits for the first LIST. Without a CRD, or the right to list ClusterNotifications (namespaced
 * RBAC), there are none, and the collection is listed again every minute.
 */
function watchedNotificationObjects(options: {
  readonly client: KubeClient;
  /** The namespace the ApplySets are watched in (every one when undefined), and the watch's stall timeout. */
  readonly config: Pick<ControllerConfig, 'namespace' | 'watchStallTimeoutMs'>;
  readonly logger: InformerLogger & { child(bindings: object): InformerLogger };
  readonly signal: AbortSignal;
}): NotificationObjects {
  const { namespace, watchStallTimeoutMs } = options.config;
  const paths = notificationPaths(
    namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`,
  );
  const start = (path: string, informer: string): SupervisedInformer =>
    startSupervisedInformer({
      client: options.client,
      path,
      missingAsEmpty: true,
      logger: options.logger.child({ informer }),
      signal: options.signal,
      ...(watchStallTimeoutMs === undefined ? {} : { stallTimeoutMs: watchStallTimeoutMs }),
      onEvent: () => undefined,
    });
  const own = start(paths.own, 'notifications');
  const cluster = start(paths.cluster, 'clusternotifications');
  const read = async (
    informer: SupervisedInformer,
    signal: AbortSignal,
    keep: (o: JsonObject) => boolean,
  ) => {
    await raceSignal(informer.synced, signal);
    return informer.list().filter(keep);
  };
  return {
    notifications: (namespace, signal) => read(own, signal, (object) => namespaceOf(object) === namespace),
    clusterNotifications: (signal) => read(cluster, signal, () => true),
  };
}

function namespaceOf(object: JsonObject): unknown {
  return isJsonObject(object['metadata']) ? object['metadata']['namespace'] : undefined;
}

/**
 * The controller's notifications (src/notify/controller-notifications.ts), reading Notifications from
 * watchedNotificationObjects: two watches for every ApplySet, not two LISTs on each change of state.
 */
export function watchedControllerNotifications(options: {
  readonly config: ControllerConfig;
  readonly clients: ControllerClients;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}): Notifier {
  const { config, clients, metrics, logger, signal } = options;
  return controllerNotifications({
    ...clients,
    cluster: config.clusterName ?? 'in-cluster',
    controllerNamespace: config.leaseNamespace,
    ...(config.notifications === undefined ? {} : { settings: config.notifications }),
    objects: watchedNotificationObjects({ client: clients.client, config, logger, signal }),
    metrics,
    logger,
    signal,
  });
}
