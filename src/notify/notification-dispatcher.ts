import PQueue from 'p-queue';
import { IntentError } from '../errors/intent-error.js';
import { messageOf } from '../errors/message-of.js';
import { notificationPolicy } from '../net/destination-policy.js';
import type { ProxyEnvironment } from '../net/proxy-environment.js';
import { tlsFailureOf } from '../net/tls-certificate-error.js';
import type { SourceHostList } from '../net/host-list.js';
import { sendOutbound } from '../net/outbound-request.js';
import { CLUSTER_RECEIVERS } from './notification-spec.js';
import { NotificationSendError } from './notification-send-error.js';
import { dedupeKeyOf, type NotificationEvent } from './notification-event.js';

/** How a notification ended, as `applyset_notifications_total{result}` counts it. */
export type NotificationResult = 'sent' | 'retried' | 'dropped' | 'filtered';

/** One HTTP POST to a receiver, shaped by its provider. */
export interface Delivery {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The receiver Secret's `ca.crt`: trusted for this receiver instead of the system's store. */
  readonly ca?: string;
}

/** Where messages go: its id (the Notification's key) and how an event becomes a request. */
export interface NotificationReceiver {
  readonly id: string;
  /** Called when the message is sent, not when queued, so a signature's timestamp is fresh. */
  delivery(event: NotificationEvent): Delivery;
  /** Called once the receiver took the message (its Notification's status records it). */
  sent?(event: NotificationEvent): void;
  /** Called when the address policy refused the receiver: nothing was sent, nor will be retried. */
  refused?(message: string): void;
}

export interface DispatcherOptions {
  /** Sends one request; throws when the receiver did not take it. */
  readonly post?: (receiver: string, delivery: Delivery, signal: AbortSignal) => Promise<void>;
  readonly count: (result: NotificationResult) => void;
  readonly warn: (receiver: string, message: string) => void;
  /** Messages waiting per receiver; a message beyond is dropped. */
  readonly queueLimit?: number;
  /** Tries of one message, the first included. */
  readonly attempts?: number;
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** How long one request may take. */
  readonly timeoutMs?: number;
  /** Messages per second and receiver at most. */
  readonly perSecond?: number;
  /** Hosts a receiver may have on an internal address (`--internal-notification-hosts`). */
  readonly internalHosts?: SourceHostList;
  /** The operator's HTTPS_PROXY, HTTP_PROXY and NO_PROXY. */
  readonly proxies?: ProxyEnvironment;
}

/** The settings an operator chooses (the controller's `--notification-*` flags). */
export type DispatcherSettings = Required<
  Pick<DispatcherOptions, 'perSecond' | 'timeoutMs' | 'attempts' | 'queueLimit'>
> &
  Pick<DispatcherOptions, 'internalHosts' | 'proxies'>;

export interface NotificationDispatcher {
  /** Queues the event for the receiver and returns at once; never throws, never waits. */
  notify(receiver: NotificationReceiver, event: NotificationEvent): void;
  /** Resolves once every queue is empty (tests, and a graceful stop). */
  idle(): Promise<void>;
  /**
   * Removes the queues of `scope` (a receiver id's prefix, e.g. `team-a/`) whose receiver is not in
   * `live`: their waiting messages are dropped and counted, a request under way aborted, and their
   * de-duplication memory forgotten, so a deleted Notification stops sending and holds nothing.
   */
  retain(scope: string, live: ReadonlySet<string>): void;
  /** Stops sending: queued messages are dropped, requests under way aborted. */
  close(): void;
  /** Forgets what was queued for a deleted ApplySet (`namespace/name`): the same state is news again. */
  forget(applySet: string): void;
}

/** Today's settings; the controller's `--notification-*` flags change them. */
export const DISPATCHER_DEFAULTS = {
  queueLimit: 100,
  attempts: 4,
  backoffMs: 1000,
  maxBackoffMs: 30_000,
  timeoutMs: 10_000,
  perSecond: 1,
} as const;

/**
 * Sends notifications in the background, so a reconcile never waits on a receiver: a bounded queue per
 * receiver, rate-limited, each message retried with exponential backoff up to a cap and then dropped
 * and counted. One message per change of state: an event whose ApplySet, state and revision the
 * receiver was already given (or has queued) is filtered.
 */
export function createNotificationDispatcher(options: DispatcherOptions): NotificationDispatcher {
  const { internalHosts: _hosts, proxies: _proxies, ...rest } = options;
  const settings = { ...DISPATCHER_DEFAULTS, ...withoutUndefined(rest) };
  const post = options.post ?? postDelivery(options.internalHosts ?? [], options.proxies);
  const closing = new AbortController();
  const queues = new Map<string, { readonly queue: PQueue; readonly stop: AbortController }>();
  // receiver + ApplySet + topic → the key of the last message queued for it.
  const lastQueued = new Map<string, string>();

  const queueOf = (receiver: string) => {
    let entry = queues.get(receiver);
    if (entry === undefined) {
      const queue = new PQueue({ concurrency: 1, interval: 1000, intervalCap: settings.perSecond });
      entry = { queue, stop: new AbortController() };
      queues.set(receiver, entry);
    }
    return entry;
  };

  const deliver = retrying(options, settings, post);

  const remove = (receiver: string): void => {
    const entry = queues.get(receiver);
    if (entry === undefined) return;
    queues.delete(receiver);
    for (let i = 0; i < entry.queue.size; i += 1) options.count('dropped');
    entry.queue.clear();
    // The request under way ends as dropped (counted by deliver) once aborted.
    entry.stop.abort();
    for (const strand of lastQueued.keys()) {
      if (strand.startsWith(`${receiver}|`)) lastQueued.delete(strand);
    }
  };

  return {
    notify(receiver, event) {
      if (closing.signal.aborted) return options.count('filtered');
      const strand = `${receiver.id}|${event.namespace}/${event.name}|${event.topic}`;
      const key = dedupeKeyOf(event);
      if (lastQueued.get(strand) === key) return options.count('filtered');
      const { queue, stop } = queueOf(receiver.id);
      if (queue.size + queue.pending >= settings.queueLimit) {
        // Not remembered as queued: the same state told again, once there is room, is sent.
        options.warn(receiver.id, 'queue full: message dropped');
        return options.count('dropped');
      }
      lastQueued.set(strand, key);
      const stopped = AbortSignal.any([closing.signal, stop.signal]);
      void queue.add(() => deliver(receiver, event, stopped));
    },
    retain(scope, live) {
      for (const receiver of [...queues.keys()]) {
        if (receiver.startsWith(scope) && !live.has(receiver)) remove(receiver);
      }
    },
    async idle() {
      await Promise.all([...queues.values()].map(({ queue }) => queue.onIdle()));
    },
    close() {
      closing.abort();
      for (const { queue } of queues.values()) queue.clear();
    },
    forget(applySet) {
      for (const strand of lastQueued.keys()) {
        if (strand.split('|')[1] === applySet) lastQueued.delete(strand);
      }
    },
  };
}

/** One message to one receiver: tried until it is taken, the attempts run out or its queue stops. */
function retrying(
  options: DispatcherOptions,
  settings: { readonly [K in keyof typeof DISPATCHER_DEFAULTS]: number },
  post: NonNullable<DispatcherOptions['post']>,
) {
  return async (
    receiver: NotificationReceiver,
    event: NotificationEvent,
    stopped: AbortSignal,
  ): Promise<void> => {
    for (let attempt = 1; ; attempt += 1) {
      if (stopped.aborted) return options.count('dropped');
      const signal = AbortSignal.any([stopped, AbortSignal.timeout(settings.timeoutMs)]);
      try {
        await post(receiver.id, receiver.delivery(event), signal);
        receiver.sent?.(event);
        return options.count('sent');
      } catch (error) {
        // A refused address (or an answer past its bound) stays refused: told once, not retried.
        if (isStalled(error)) {
          options.warn(receiver.id, `refused, nothing sent: ${messageOf(error)}`);
          receiver.refused?.(messageOf(error));
          return options.count('dropped');
        }
        if (attempt >= settings.attempts || stopped.aborted) {
          options.warn(receiver.id, `dropped after ${attempt} attempt(s): ${messageOf(error)}`);
          return options.count('dropped');
        }
        options.count('retried');
        const delay = Math.min(settings.backoffMs * 2 ** (attempt - 1), settings.maxBackoffMs);
        await pause(delay, stopped);
      }
    }
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * POSTs a delivery through the outbound door, under the policy of its sender: a tenant's Notification
 * or the platform's ClusterNotification (src/net/destination-policy.ts). Redirects are not followed: a
 * receiver's answer must not send the message, and the credential in it, to a host its Secret does not
 * name. The answer's body is not read: its status says whether the message was taken.
 */
function postDelivery(internalHosts: SourceHostList, proxies: ProxyEnvironment | undefined) {
  return async (receiver: string, delivery: Delivery, signal: AbortSignal): Promise<void> => {
    const sender = receiver.startsWith(CLUSTER_RECEIVERS) ? 'cluster-notification' : 'notification';
    // The socket is opened on a later turn: notify() runs in a reconcile and never waits on a receiver.
    await new Promise((resolve) => setImmediate(resolve));
    let status: number;
    try {
      ({ status } = await sendOutbound({
        url: new URL(delivery.url),
        method: 'POST',
        policy: { ...notificationPolicy(internalHosts, sender), proxies },
        headers: { 'content-type': 'application/json', ...delivery.headers },
        body: delivery.body,
        ...(delivery.ca === undefined ? {} : { transport: { ca: delivery.ca } }),
        signal,
      }));
    } catch (error) {
      if (isStalled(error)) throw error;
      // A certificate's failure names the host (never the path: a receiver's URL may hold a credential).
      const tls = tlsFailureOf(error, new URL(delivery.url).host);
      throw new NotificationSendError(receiver, tls?.message ?? networkProblem(error, signal), {
        cause: error,
      });
    }
    if (status < 200 || status > 299) {
      throw new NotificationSendError(receiver, `answered HTTP ${status}`);
    }
  };
}

function isStalled(error: unknown): boolean {
  return error instanceof IntentError && error.intent === 'stalled';
}

/** The network error without the URL (fetch puts none in its message, but its cause may). */
function networkProblem(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer in time';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'network error';
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
