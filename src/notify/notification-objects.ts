import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import { CLUSTER_NOTIFICATION_API, NOTIFICATION_API } from './notification-spec.js';

/**
 * Where the notifier reads Notifications and ClusterNotifications from: the controller's informers
 * (src/controller/runtime/watched-notifications.ts: no request per change of state), or a LIST each
 * time (listedNotificationObjects).
 */
export interface NotificationObjects {
  /** The Notifications of `namespace`; none without their CRD. */
  notifications(namespace: string, signal: AbortSignal): Promise<readonly JsonValue[]>;
  /** Every ClusterNotification; none without their CRD or the right to list them (namespaced RBAC). */
  clusterNotifications(signal: AbortSignal): Promise<readonly JsonValue[]>;
}

/** The collection paths of both kinds; `scope` is '' (every namespace) or `/namespaces/NAME`. */
export function notificationPaths(scope: string): { readonly own: string; readonly cluster: string } {
  const own = NOTIFICATION_API;
  const cluster = CLUSTER_NOTIFICATION_API;
  return {
    own: `/apis/${own.group}/${own.version}${scope}/${own.plural}`,
    cluster: `/apis/${cluster.group}/${cluster.version}/${cluster.plural}`,
  };
}

/** A LIST for every read, with `client`. */
export function listedNotificationObjects(client: KubeClient): NotificationObjects {
  const items = async (path: string, signal: AbortSignal, missing: (error: KubeApiError) => boolean) => {
    try {
      const list = await client.request({ method: 'GET', path, signal });
      return isJsonObject(list) && Array.isArray(list['items']) ? list['items'] : [];
    } catch (error) {
      if (error instanceof KubeApiError && missing(error)) return [];
      throw error;
    }
  };
  return {
    notifications: (namespace, signal) =>
      items(notificationPaths(`/namespaces/${encodeURIComponent(namespace)}`).own, signal, (e) => e.notFound),
    clusterNotifications: (signal) =>
      items(notificationPaths('').cluster, signal, (e) => e.notFound || e.status === 403),
  };
}
