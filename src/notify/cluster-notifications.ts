import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { Logger } from '../observability/create-logger.js';
import { reachesNamespace, readClusterNotification, receiverIdOf } from './notification-spec.js';
import { skippedRecordOf, sentRecordOf, type ListedNotification } from './sent-record.js';

/** The ClusterNotifications that reach one namespace, and the ids of every one that exists. */
interface ClusterNotificationsRead {
  readonly reaching: readonly ListedNotification[];
  readonly live: ReadonlySet<string>;
}

/**
 * The ClusterNotifications (the platform team's, cluster-scoped) among `items` that select ApplySets
 * of `namespace`, whose labels are read with the controller's identity when some exist.
 */
export async function clusterNotificationsFor(
  client: KubeClient,
  items: readonly JsonValue[],
  namespace: string,
  controllerNamespace: string,
  signal: AbortSignal,
  log: Pick<Logger, 'warn'>,
): Promise<ClusterNotificationsRead> {
  const configs: ListedNotification[] = [];
  for (const item of items) {
    const read = readClusterNotification(item, controllerNamespace);
    if (read.ok)
      configs.push({ config: read.config, sent: sentRecordOf(item), skipped: skippedRecordOf(item) });
    else
      log.warn(
        { notification: `ClusterNotification/${read.name}` },
        `ClusterNotification ignored: ${read.problem}`,
      );
  }
  const live = new Set(configs.map(({ config }) => receiverIdOf(config)));
  if (configs.length === 0) return { reaching: [], live };
  // A namespace's labels are read only when some ClusterNotification exists to match them.
  const object = await getOrNothing(client, `/api/v1/namespaces/${encodeURIComponent(namespace)}`, signal);
  const metadata = isJsonObject(object) && isJsonObject(object['metadata']) ? object['metadata'] : {};
  const labels = isJsonObject(metadata['labels']) ? metadata['labels'] : {};
  const stringLabels = Object.fromEntries(
    Object.entries(labels).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  return {
    reaching: configs.filter(({ config }) =>
      reachesNamespace(config, { name: namespace, labels: stringLabels }),
    ),
    live,
  };
}

async function getOrNothing(
  client: KubeClient,
  path: string,
  signal: AbortSignal,
): Promise<JsonValue | undefined> {
  try {
    return await client.request({ method: 'GET', path, signal });
  } catch (error) {
    if (error instanceof KubeApiError && (error.notFound || error.status === 403)) return undefined;
    throw error;
  }
}
