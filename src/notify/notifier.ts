/**
 * The shell around notifications: after a reconcile's report, the Notifications of the ApplySet's
 * namespace are listed, those selecting the event get it, each with its Secret read as the ApplySet's
 * account. All of it runs in the background: the reconcile hands over the outcome and goes on.
 */
import type { ApplySet } from '../api/applyset-types.js';
import { lenientApplySetSpec } from '../api/resolve-applyset-spec.js';
import type { Correction } from '../api/fight-tracker.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { impersonatedUser, readSecret } from '../controller/applyset-api.js';
import { messageOf } from '../errors/message-of.js';
import { credentialsRefusal } from '../git/credentials-refusal.js';
import { SOURCE_HOSTS_ANNOTATION, parseSourceHostList } from '../git/source-host-list.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { Logger } from '../observability/create-logger.js';
import type { NotificationDispatcher, NotificationResult } from './notification-dispatcher.js';
import { dedupeKeyOf, notificationEventsOf, type NotificationState } from './notification-event.js';
import { clusterNotificationsFor } from './cluster-notifications.js';
import {
  CLUSTER_RECEIVERS,
  NOTIFICATION_API,
  readNotification,
  receiverIdOf,
  selects,
  type NotificationConfig,
} from './notification-spec.js';
import { receiverOf, type ReceiverSecret } from './receiver-of.js';

export type Notifier = (
  applySet: ApplySet,
  outcome: ReconcileOutcome,
  run: { readonly fighting: readonly Correction[]; readonly steady: boolean },
) => void;

export function createNotifier(options: {
  /** The controller's own client: Notifications are configuration, listed with its rights. */
  readonly client: KubeClient;
  /** A client reading as the ApplySet's account: a Notification's Secret is read with it. */
  readonly readerAs: (user: string | undefined) => KubeClient;
  readonly defaultServiceAccountName: string | undefined;
  /** Where ClusterNotifications' Secrets are (the controller's own namespace); undefined: none are read. */
  readonly controllerNamespace?: string | undefined;
  readonly dispatcher: NotificationDispatcher;
  readonly cluster: string;
  readonly now: () => number;
  readonly log: Pick<Logger, 'warn'>;
  readonly count: (result: NotificationResult) => void;
  readonly signal: AbortSignal;
}): Notifier {
  // The last sync state of each ApplySet, so an apply after a failure reads as recovered.
  const lastSync = new Map<string, NotificationState>();
  // What each ApplySet's last run had to tell: a run with nothing new lists no Notification and reads
  // no Secret, so a fleet at rest costs the API server nothing more.
  const lastNews = new Map<string, string>();
  const warnOnce = onceEach(options.log);
  const deliver = async (
    applySet: ApplySet,
    outcome: ReconcileOutcome,
    { fighting, steady }: { readonly fighting: readonly string[]; readonly steady: boolean },
  ) => {
    const { namespace = '', name } = applySet.metadata;
    const key = `${namespace}/${name}`;
    const previousSync = lastSync.get(key);
    const events = notificationEventsOf({ namespace, name }, outcome, {
      ...(previousSync === undefined ? {} : { previousSync }),
      fighting,
      steady,
    });
    const sync = events.find((event) => event.topic === 'sync');
    if (sync !== undefined) lastSync.set(key, sync.state);
    const news = events.map((event) => `${event.topic}:${dedupeKeyOf(event)}`).join(',');
    if (lastNews.get(key) === news) return;
    lastNews.set(key, news);
    const own = await listNotifications(options.client, namespace, options.signal, options.log);
    // A Notification deleted since its namespace was last listed loses its queue.
    options.dispatcher.retain(`${namespace}/`, new Set(own.map(receiverIdOf)));
    const configs = [...own, ...(await clusterConfigs(namespace))];
    const labels = applySet.metadata.labels ?? {};
    const lenient = lenientApplySetSpec(applySet.spec);
    const serviceAccount = lenient.serviceAccountName ?? options.defaultServiceAccountName;
    const user = impersonatedUser(namespace, serviceAccount);
    for (const config of configs) {
      const selected = events.filter((event) => selects(config, { name, labels }, event));
      if (selected.length === 0) continue;
      // A ClusterNotification's Secret is the platform's, in the controller's namespace: read as it.
      const reader = config.acrossNamespaces === undefined ? options.readerAs(user) : options.client;
      const secret = await readReceiverSecret(reader, config, options.signal);
      if ('problem' in secret) {
        options.log.warn({ notification: receiverIdOf(config) }, secret.problem);
        for (const _ of selected) options.count('dropped');
        continue;
      }
      const receiver = receiverOf(config, secret, { ...options, sourceUrl: lenient.url });
      if (!receiver.ok) {
        warnOnce(receiverIdOf(config), `${namespace}/${name}`, receiver.problem);
        for (const _ of selected) options.count('filtered');
        continue;
      }
      for (const event of selected.filter(receiver.receiver.wants)) {
        options.dispatcher.notify(receiver.receiver, event);
      }
    }
  };
  const clusterConfigs = async (namespace: string) => {
    if (options.controllerNamespace === undefined) return [];
    const { reaching, live } = await clusterNotificationsFor(
      options.client,
      namespace,
      options.controllerNamespace,
      options.signal,
      options.log,
    );
    options.dispatcher.retain(CLUSTER_RECEIVERS, live);
    return reaching;
  };
  return (applySet, outcome, run) => {
    deliver(applySet, outcome, { fighting: run.fighting.map((c) => c.object), steady: run.steady }).catch(
      (error: unknown) => options.log.warn({ error: messageOf(error) }, 'notifications not sent'),
    );
  };
}

/** A Notification that cannot serve an ApplySet says so once, not on every change of state. */
function onceEach(log: Pick<Logger, 'warn'>) {
  const warned = new Set<string>();
  return (notification: string, applySet: string, problem: string) => {
    if (warned.has(`${notification}|${applySet}`)) return;
    warned.add(`${notification}|${applySet}`);
    log.warn({ notification, applySet }, problem);
  };
}

async function listNotifications(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
  log: Pick<Logger, 'warn'>,
): Promise<NotificationConfig[]> {
  const { group, version, plural } = NOTIFICATION_API;
  let list: JsonValue;
  try {
    list = await client.request({
      method: 'GET',
      path: `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${plural}`,
      signal,
    });
  } catch (error) {
    // Without the Notification CRD installed there is nothing to send.
    if (error instanceof KubeApiError && error.notFound) return [];
    throw error;
  }
  const items = isJsonObject(list) && Array.isArray(list['items']) ? list['items'] : [];
  const configs: NotificationConfig[] = [];
  for (const item of items) {
    const read = readNotification(item);
    if (read.ok) configs.push(read.config);
    else log.warn({ notification: `${namespace}/${read.name}` }, `Notification ignored: ${read.problem}`);
  }
  return configs;
}

/**
 * The Secret of a Notification, read as the ApplySet's account (as Git credentials are, so a tenant
 * cannot have the controller send a Secret their account may not get), and its address checked
 * against the hosts the Secret names: a notification Secret must name them.
 */
async function readReceiverSecret(
  reader: KubeClient,
  config: NotificationConfig,
  signal: AbortSignal,
): Promise<ReceiverSecret | { readonly problem: string }> {
  const cluster = config.acrossNamespaces !== undefined;
  const kind = cluster ? 'ClusterNotification' : 'Notification';
  const what = `Secret ${config.namespace}/${config.secretName} (spec.provider.secretRef of ${kind} ${config.name})`;
  const secret = await readSecret(reader, config.namespace, config.secretName, signal);
  if (secret.kind === 'forbidden') {
    const who = cluster ? 'the controller' : "the ApplySet's account";
    return { problem: `${who} may not get ${what}; nothing was sent` };
  }
  if (secret.kind === 'missing') return { problem: `${what} does not exist` };
  const { data, annotations } = secret;
  const field = (key: string) => data[key]?.trim();
  const address = field('address');
  if (address === undefined || !/^https?:\/\//.test(address)) {
    return { problem: `${what} has no http(s) address` };
  }
  const hostList = annotations[SOURCE_HOSTS_ANNOTATION];
  const hosts = hostList === undefined ? undefined : parseSourceHostList(hostList);
  const refusal = credentialsRefusal(address, hosts, true);
  if (refusal !== undefined) return { problem: `${what} ${refusal}; nothing was sent` };
  const token = field('token');
  const hmacKey = field('hmacKey');
  // An unsigned generic webhook could be forged by anyone who can reach the receiver.
  if (config.provider === 'webhook' && (hmacKey === undefined || hmacKey === '')) {
    return { problem: `${what} has no hmacKey, which a webhook Notification needs` };
  }
  return {
    address,
    ...(token === undefined ? {} : { token }),
    ...(hmacKey === undefined ? {} : { hmacKey }),
  };
}
