/**
 * The shell around notifications: after a reconcile's report, the Notifications of the ApplySet's
 * namespace are listed, those selecting the event get it, each with its Secret read as the ApplySet's
 * account. All of it runs in the background: the reconcile hands over the outcome and goes on.
 */
import type { ApplySetView } from '../api/applyset-view.js';
import type { Correction } from '../api/fight-tracker.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { readSecret } from '../kube/applyset-api.js';
import { messageOf } from '../errors/message-of.js';
import { credentialsRefusal } from '../git/credentials-refusal.js';
import { SOURCE_HOSTS_ANNOTATION, parseSourceHostList } from '../net/host-list.js';
import { retryingTransient } from '../kube/retrying-transient.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../observability/create-logger.js';
import type { NotificationDispatcher, NotificationResult } from './notification-dispatcher.js';
import {
  applyingEvent,
  newsOf,
  notificationEventsOf,
  type NotificationEvent,
  type NotificationState,
} from './notification-event.js';
import { clusterNotificationsFor } from './cluster-notifications.js';
import { listedNotificationObjects, type NotificationObjects } from './notification-objects.js';
import {
  CLUSTER_RECEIVERS,
  readNotification,
  receiverIdOf,
  selects,
  type NotificationConfig,
} from './notification-spec.js';
import { FORGES, receiverOf, type ReceiverSecret } from './receiver-of.js';
import {
  defaultNotificationGitHubApps,
  receiverAppToken,
  type NotificationGitHubApps,
} from './receiver-app-token.js';
import {
  forgetSent,
  lastSyncRevision,
  syncStateIn,
  recordSkipped,
  recordSent,
  recordsApplySet,
  sentRecordOf,
  recordRefused,
  wasSent,
  type ListedNotification,
} from './sent-record.js';

/** What the reconcile tells the notifications; each call returns at once and works in the background. */
export interface Notifier {
  /** After a reconcile's status is written: its outcome. */
  reported(
    view: ApplySetView,
    outcome: ReconcileOutcome,
    run: { readonly fighting: readonly Correction[]; readonly steady: boolean },
  ): void;
  /** The reconcile starts applying a revision not applied before: a forge marks its commit pending. */
  applying(view: ApplySetView, revision: string): void;
  /** The ApplySet is gone: what was remembered about it goes too, here and in the Notifications' status. */
  forget(namespace: string, name: string): void;
}

interface NotifierOptions {
  /** The controller's own client: Notifications are configuration, read with its rights. */
  readonly client: KubeClient;
  /** Where Notifications and ClusterNotifications are read: the controller's informers; a LIST each time by default. */
  readonly objects?: NotificationObjects;
  /** A client reading as the ApplySet's account: a Notification's Secret is read with it. */
  readonly readerAs: (user: string | undefined) => KubeClient;
  /** Where ClusterNotifications' Secrets are (the controller's own namespace); undefined: none are read. */
  readonly controllerNamespace?: string | undefined;
  readonly dispatcher: NotificationDispatcher;
  /** GitHub Apps' installation tokens, for github Notifications whose Secret holds an app. */
  readonly githubApps?: NotificationGitHubApps;
  readonly cluster: string;
  readonly now: () => number;
  readonly log: Pick<Logger, 'warn'>;
  readonly count: (result: NotificationResult) => void;
  readonly signal: AbortSignal;
}

export function createNotifier(options: NotifierOptions): Notifier {
  // The last sync state of each ApplySet and its revision, so an apply after a failure reads as
  // recovered, and a revision retried after its failure is not marked pending again.
  const lastSync = new Map<string, { readonly state: NotificationState; readonly revision: string }>();
  // What each ApplySet's last run had to tell (newsOf): a run with nothing new lists no Notification
  // and reads no Secret, so a fleet at rest costs the API server nothing more.
  const lastNews = new Map<string, string>();
  // The Notifications listed when a run started applying, taken by that run's report: one LIST a run.
  const listedAtApply = new Map<string, Promise<ListedNotification[]>>();
  // Each ApplySet's work, one after another: the pending mark of a run is queued before its outcome.
  const chains = new Map<string, Promise<void>>();
  const inOrder = (key: string, work: () => Promise<void>) => {
    const next = (chains.get(key) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) => options.log.warn({ error: messageOf(error) }, 'notifications not sent'));
    chains.set(key, next);
    void next.then(() => chains.get(key) === next && chains.delete(key));
  };
  const send = sender(options);
  const list = notificationLister(options);

  return {
    reported(view, outcome, run) {
      const { namespace = '', name } = view.applySet.metadata;
      const key = `${namespace}/${name}`;
      const listed = listedAtApply.get(key);
      listedAtApply.delete(key);
      const eventsAfter = (previousSync: NotificationState | undefined) => {
        const events = notificationEventsOf({ namespace, name }, outcome, {
          ...(previousSync === undefined ? {} : { previousSync }),
          fighting: run.fighting.map((c) => c.object),
          steady: run.steady,
        });
        const sync = events.find((event) => event.topic === 'sync');
        if (sync !== undefined) lastSync.set(key, { state: sync.state, revision: sync.revision ?? '' });
        return events;
      };
      const previous = lastSync.get(key)?.state;
      const events = eventsAfter(previous);
      const news = newsOf(events);
      if (lastNews.get(key) === news) return;
      lastNews.set(key, news);
      inOrder(key, async () => {
        const notifications = await (listed ?? list(namespace));
        // After a restart the last state is in the Notifications' status: an apply after a failure
        // told before the restart is still a recovery.
        const told =
          previous ?? notifications.map(({ sent }) => syncStateIn(sent, namespace, name)).find(Boolean);
        await send(view, notifications, told === previous ? events : eventsAfter(told));
      });
    },
    applying(view, revision) {
      const { namespace = '', name } = view.applySet.metadata;
      const key = `${namespace}/${name}`;
      // A revision whose failure was already told is being retried: its commit already shows that.
      if (lastSync.get(key)?.revision === revision) return;
      const listed = list(namespace);
      // The report takes the list; a rejection is its to log.
      listed.catch(() => undefined);
      listedAtApply.set(key, listed);
      const event = applyingEvent({ namespace, name }, revision);
      inOrder(key, async () => {
        const notifications = (await listed).filter(
          ({ config, sent }) =>
            FORGES.has(config.provider) && lastSyncRevision(sent, namespace, name) !== revision,
        );
        await send(view, notifications, [event]);
      });
    },
    forget(namespace, name) {
      const key = `${namespace}/${name}`;
      lastSync.delete(key);
      lastNews.delete(key);
      listedAtApply.delete(key);
      options.dispatcher.forget(key);
      inOrder(key, async () => {
        for (const { config, sent, skipped } of await list(namespace)) {
          if (!recordsApplySet(sent, namespace, name) && skipped?.has(`${namespace}/${name}`) !== true)
            continue;
          await forgetSent(options.client, config, { namespace, name }, options.signal);
        }
      });
    },
  };
}

/**
 * Lists the Notifications of a namespace and the ClusterNotifications reaching it; the dispatcher
 * drops the queue and memory of one that is gone.
 */
function notificationLister(options: NotifierOptions): (namespace: string) => Promise<ListedNotification[]> {
  const objects = options.objects ?? listedNotificationObjects(options.client);
  return (namespace) =>
    retryingTransient(options.signal, () => listAllFor(options, objects, namespace), LIST_RETRY_DELAYS_MS);
}

/** Delays before each retry of a list the API server could not answer: about 7 s in all. */
const LIST_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 3000];

/** The Notifications of a namespace and the ClusterNotifications reaching it. */
async function listAllFor(
  options: NotifierOptions,
  objects: NotificationObjects,
  namespace: string,
): Promise<ListedNotification[]> {
  const own = await listNotifications({ objects, signal: options.signal }, options.log, namespace);
  options.dispatcher.retain(`${namespace}/`, new Set(own.map(({ config }) => receiverIdOf(config))));
  if (options.controllerNamespace === undefined) return own;
  const { reaching, live } = await clusterNotificationsFor(
    options.client,
    await objects.clusterNotifications(options.signal),
    namespace,
    options.controllerNamespace,
    options.signal,
    options.log,
  );
  options.dispatcher.retain(CLUSTER_RECEIVERS, live);
  return [...own, ...reaching];
}

/**
 * Sends events to the Notifications that select them and were not told them already (their status
 * says so across restarts), each with its Secret read as the ApplySet's account; a successful send is
 * written into the Notification's status.
 */
function sender(options: NotifierOptions) {
  const warnOnce = onceEach(options.log);
  const apps = options.githubApps ?? defaultNotificationGitHubApps();
  return async (
    { applySet, lenient, account }: ApplySetView,
    notifications: readonly ListedNotification[],
    events: readonly NotificationEvent[],
  ): Promise<void> => {
    const { namespace = '', name } = applySet.metadata;
    const labels = applySet.metadata.labels ?? {};
    const { user } = account;
    for (const { config, sent, skipped } of notifications) {
      const selected = events.filter(
        (event) => selects(config, { name, labels }, event) && !wasSent(sent, event),
      );
      if (selected.length === 0) continue;
      // A ClusterNotification's Secret is the platform's, in the controller's namespace: read as it.
      const reader = config.acrossNamespaces === undefined ? options.readerAs(user) : options.client;
      const secret = await readReceiverSecret(reader, config, apps, options.signal);
      if ('problem' in secret) {
        options.log.warn({ notification: receiverIdOf(config) }, secret.problem);
        for (const _ of selected) options.count('dropped');
        continue;
      }
      const found = receiverOf(config, secret, { ...options, sourceUrl: lenient.url });
      // A ClusterNotification says in its status why it skips an ApplySet, and clears it once it does not.
      const said = skipped?.get(`${namespace}/${name}`);
      const problem = found.ok ? undefined : found.problem;
      if (config.acrossNamespaces !== undefined && said !== problem) {
        const refusal = problem === undefined ? null : { message: problem, at: new Date(options.now()) };
        await recordSkipped(options.client, config, { namespace, name }, refusal, options.signal).catch(
          (error: unknown) =>
            options.log.warn(
              { notification: receiverIdOf(config), error: messageOf(error) },
              'the refusal is not recorded in the status of the ClusterNotification',
            ),
        );
      }
      if (!found.ok) {
        warnOnce(receiverIdOf(config), `${namespace}/${name}`, found.problem);
        for (const _ of selected) options.count('filtered');
        continue;
      }
      const receiver = found.receiver;
      const record = (event: NotificationEvent) =>
        recordSent(options.client, config, event, new Date(options.now()), options.signal).catch(
          (error: unknown) =>
            options.log.warn(
              { notification: receiverIdOf(config), error: messageOf(error) },
              'sent, but not recorded in the status of the Notification',
            ),
        );
      const refused = (message: string) =>
        recordRefused(options.client, config, message, new Date(options.now()), options.signal).catch(
          (error: unknown) =>
            options.log.warn(
              { notification: receiverIdOf(config), error: messageOf(error) },
              'refused, but not recorded in the status of the Notification',
            ),
        );
      const recording = {
        ...receiver,
        sent: (event: NotificationEvent) => void record(event),
        refused: (message: string) => void refused(message),
      };
      for (const event of selected.filter(receiver.wants)) options.dispatcher.notify(recording, event);
    }
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
  { objects, signal }: Pick<NotifierOptions, 'signal'> & { readonly objects: NotificationObjects },
  log: Pick<Logger, 'warn'>,
  namespace: string,
): Promise<ListedNotification[]> {
  const items = await objects.notifications(namespace, signal);
  const listed: ListedNotification[] = [];
  for (const item of items) {
    const read = readNotification(item);
    if (read.ok) listed.push({ config: read.config, sent: sentRecordOf(item) });
    else log.warn({ notification: `${namespace}/${read.name}` }, `Notification ignored: ${read.problem}`);
  }
  return listed;
}

/**
 * The Secret of a Notification, read as the ApplySet's account (as Git credentials are, so a tenant
 * cannot have the controller send a Secret their account may not get), and its address checked
 * against the hosts the Secret names: a notification Secret must name them.
 */
async function readReceiverSecret(
  reader: KubeClient,
  config: NotificationConfig,
  apps: NotificationGitHubApps,
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
  const app = await receiverAppToken({ data, address, hosts }, what, config, apps, signal);
  if (app !== undefined && 'problem' in app) return app;
  const token = app?.token ?? field('token');
  const hmacKey = field('hmacKey');
  // An unsigned generic webhook could be forged by anyone who can reach the receiver.
  if (config.provider === 'webhook' && (hmacKey === undefined || hmacKey === '')) {
    return { problem: `${what} has no hmacKey, which a webhook Notification needs` };
  }
  const ca = field('ca.crt');
  return {
    address,
    ...(ca === undefined || ca === '' ? {} : { ca }),
    ...(token === undefined ? {} : { token }),
    ...(hmacKey === undefined ? {} : { hmacKey }),
  };
}
