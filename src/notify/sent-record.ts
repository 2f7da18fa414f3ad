/**
 * What a Notification last sent about each ApplySet, kept in its status subresource so that a
 * restarted controller does not announce a state its receivers were already told (nor post a commit
 * status the forge already shows). One entry per ApplySet and strand, written after a successful send
 * with a JSON merge patch (each send touches its own key, so concurrent writers do not clash), removed
 * when the ApplySet is deleted; the CRD caps the map (maxProperties), so a status never grows unbounded.
 */
import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { NotificationEvent, NotificationState } from './notification-event.js';
import { CLUSTER_NOTIFICATION_API, NOTIFICATION_API, type NotificationConfig } from './notification-spec.js';

/** The last state sent on one strand of one ApplySet. */
interface SentEntry {
  readonly state: string;
  readonly revision: string;
}

/** `status.lastSent` of a Notification, keyed `<namespace>/<applyset>/<topic>`. */
export type SentRecord = ReadonlyMap<string, SentEntry>;

/** A Notification or ClusterNotification as listed: what it asks for, and what it last sent. */
export interface ListedNotification {
  readonly config: NotificationConfig;
  readonly sent: SentRecord;
  /** `status.skipped` of a ClusterNotification: why it sends nothing for an ApplySet (`<ns>/<name>`). */
  readonly skipped?: ReadonlyMap<string, string>;
}

/** The key of an ApplySet's strand in `status.lastSent`. */
function entryKey(namespace: string, name: string, topic: string): string {
  return `${namespace}/${name}/${topic}`;
}

/** Reads `status.lastSent` of a listed Notification; anything malformed reads as never sent. */
export function sentRecordOf(notification: JsonValue): SentRecord {
  const status = isJsonObject(notification) ? notification['status'] : undefined;
  const lastSent = isJsonObject(status) ? status['lastSent'] : undefined;
  const record = new Map<string, SentEntry>();
  if (!isJsonObject(lastSent)) return record;
  for (const [key, value] of Object.entries(lastSent)) {
    if (!isJsonObject(value)) continue;
    const { state, revision } = value;
    if (typeof state === 'string') {
      record.set(key, { state, revision: typeof revision === 'string' ? revision : '' });
    }
  }
  return record;
}

/** Reads `status.skipped` of a listed ClusterNotification: the message per `<namespace>/<applyset>`. */
export function skippedRecordOf(notification: JsonValue): ReadonlyMap<string, string> {
  const status = isJsonObject(notification) ? notification['status'] : undefined;
  const skipped = isJsonObject(status) ? status['skipped'] : undefined;
  const record = new Map<string, string>();
  if (!isJsonObject(skipped)) return record;
  for (const [key, value] of Object.entries(skipped)) {
    const message = isJsonObject(value) ? value['message'] : undefined;
    if (typeof message === 'string') record.set(key, message);
  }
  return record;
}

/**
 * Says in a ClusterNotification's status why it sends nothing for an ApplySet (null: it does again),
 * so the platform team sees which tenant named which repository without reading the controller's
 * logs. The message names the repositories, never the token.
 */
export async function recordSkipped(
  client: KubeClient,
  notification: StatusOwner,
  applySet: { readonly namespace: string; readonly name: string },
  refusal: { readonly message: string; readonly at: Date } | null,
  signal: AbortSignal,
): Promise<void> {
  const entry = refusal === null ? null : { message: refusal.message, at: refusal.at.toISOString() };
  await client.request({
    method: 'PATCH',
    path: statusPath(notification),
    contentType: 'application/merge-patch+json',
    body: JSON.stringify({ status: { skipped: { [`${applySet.namespace}/${applySet.name}`]: entry } } }),
    signal,
  });
}

/** A recovery is an apply after a failure: once sent, the next apply of that revision is no news. */
function sameState(state: NotificationState | string): string {
  return state === 'recovered' ? 'applied' : state;
}

/** Whether the record shows the receiver was already told this event (same state and revision). */
export function wasSent(record: SentRecord, event: NotificationEvent): boolean {
  const entry = record.get(entryKey(event.namespace, event.name, event.topic));
  return (
    entry !== undefined &&
    sameState(entry.state) === sameState(event.state) &&
    entry.revision === (event.revision ?? '')
  );
}

/** The revision whose sync state the receiver was last told about, if any. */
export function lastSyncRevision(record: SentRecord, namespace: string, name: string): string | undefined {
  return record.get(entryKey(namespace, name, 'sync'))?.revision;
}

/** The sync state the receiver was last told about this ApplySet, if it is one an event can follow. */
export function syncStateIn(
  record: SentRecord,
  namespace: string,
  name: string,
): NotificationState | undefined {
  const state = record.get(entryKey(namespace, name, 'sync'))?.state;
  return SYNC_STATES.has(state ?? '') ? (state as NotificationState) : undefined;
}

const SYNC_STATES: ReadonlySet<string> = new Set([
  'progressing',
  'applied',
  'recovered',
  'failed',
  'healthTimeout',
  'stalled',
  'pruneWaiting',
]);

/** Whether the record names anything about this ApplySet. */
export function recordsApplySet(record: SentRecord, namespace: string, name: string): boolean {
  const prefix = `${namespace}/${name}/`;
  return [...record.keys()].some((key) => key.startsWith(prefix));
}

/** A Notification, or a ClusterNotification (whose `namespace` is the controller's, not its own). */
type StatusOwner = Pick<NotificationConfig, 'namespace' | 'name' | 'acrossNamespaces'>;

function statusPath({ namespace, name, acrossNamespaces }: StatusOwner): string {
  if (acrossNamespaces !== undefined) {
    const { group, version, plural } = CLUSTER_NOTIFICATION_API;
    return `/apis/${group}/${version}/${plural}/${encodeURIComponent(name)}/status`;
  }
  const { group, version, plural } = NOTIFICATION_API;
  return `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}/status`;
}

/**
 * Writes one sent event into its Notification's status (the controller's own right on
 * notifications/status, or clusternotifications/status).
 */
export async function recordSent(
  client: KubeClient,
  notification: StatusOwner,
  event: NotificationEvent,
  sentAt: Date,
  signal: AbortSignal,
): Promise<void> {
  const entry = { state: event.state, revision: event.revision ?? '', sentAt: sentAt.toISOString() };
  await patchLastSent(
    client,
    notification,
    { [entryKey(event.namespace, event.name, event.topic)]: entry },
    signal,
    // A send that went through ends an earlier refusal (the operator listed the host since).
    { refused: null },
  );
}

/**
 * Writes why the address policy refused the Notification's receiver into `status.refused`: the
 * tenant reads there that nothing was sent and why, and nothing about what listens at the address.
 */
export async function recordRefused(
  client: KubeClient,
  notification: StatusOwner,
  message: string,
  at: Date,
  signal: AbortSignal,
): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: statusPath(notification),
    contentType: 'application/merge-patch+json',
    body: JSON.stringify({ status: { refused: { message, at: at.toISOString() } } }),
    signal,
  });
}

/** Removes every entry of a deleted ApplySet from a Notification's status. */
export async function forgetSent(
  client: KubeClient,
  notification: StatusOwner,
  applySet: { readonly namespace: string; readonly name: string },
  signal: AbortSignal,
): Promise<void> {
  const gone = Object.fromEntries(
    ['sync', 'drift', 'fight'].map((topic) => [entryKey(applySet.namespace, applySet.name, topic), null]),
  );
  await patchLastSent(client, notification, gone, signal);
  if (notification.acrossNamespaces !== undefined) {
    await recordSkipped(client, notification, applySet, null, signal);
  }
}

async function patchLastSent(
  client: KubeClient,
  notification: StatusOwner,
  lastSent: Record<string, JsonValue>,
  signal: AbortSignal,
  more: Record<string, JsonValue> = {},
): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: statusPath(notification),
    contentType: 'application/merge-patch+json',
    body: JSON.stringify({ status: { lastSent, ...more } }),
    signal,
  });
}
