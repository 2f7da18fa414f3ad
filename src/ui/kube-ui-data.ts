import { APPLYSET_KIND, type ApplySet, type RemoteKubeConfigRef } from '../api/applyset-types.js';
import { lenientApplySetSpec } from '../api/resolve-applyset-spec.js';
import { messageOf } from '../errors/message-of.js';
import { startSupervisedInformer } from '../kube/supervised-informer.js';
import type { InformerLogger } from '../kube/watch-once.js';
import type { KubeClient } from '../kube/kube-client.js';
import { createKubeObjectApi } from '../kube/kube-object-api.js';
import { createRestMapper } from '../kube/rest-mapper.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { applySetPath } from '../kube/applyset-api.js';
import { COMPRESSED_INVENTORY_KEY } from '../inventory/inventory-encoding.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import type { UiChange, UiData, UiEvent, UiObjectReader } from './ui-data.js';

export interface KubeUiDataOptions {
  /** Every list, watch and object read goes through it, as its user. */
  readonly client: KubeClient;
  /** One namespace, or undefined for all of them (`-A`). */
  readonly namespace: string | undefined;
  readonly logger: InformerLogger;
  readonly signal: AbortSignal;
  /**
   * The objects of a set applied to a remote cluster (spec.kubeConfig): read there, through the
   * kubeconfig Secret the set names (remote-object-reader.ts).
   */
  readonly remoteReader: (namespace: string, kubeConfig: RemoteKubeConfigRef) => UiObjectReader;
  /** What the next run would change, when this view can compute it (ui-preview.ts). */
  readonly preview?: UiData['preview'];
}

/** Why the logs of a set's hook Jobs on a remote cluster (spec.kubeConfig) are not shown. */
export const REMOTE_LOGS_UNREAD =
  'not read: the set is applied to a remote cluster (spec.kubeConfig); read it there with kubectl logs';

/**
 * Annotation values past this size (kubectl's last-applied copy) are not kept, but for the inventory:
 * the page lists a set's objects from it while the status has no list yet.
 */
const INVENTORY_ANNOTATIONS: readonly string[] = [MetadataKeys.lastAppliedObjects, COMPRESSED_INVENTORY_KEY];
const MAX_KEPT_ANNOTATION_BYTES = 2048;

/**
 * The data of `applyset ui`: one informer on ApplySets and one on Events, shared by every open page,
 * read as the kubeconfig's user; an ApplySet's objects are read as that user too, on this cluster or,
 * for a set with spec.kubeConfig, on the cluster its kubeconfig names.
 */
export function createKubeUiData(options: KubeUiDataOptions): UiData & { readonly synced: Promise<void> } {
  const listeners = new Set<(change: UiChange) => void>();
  const notify = (change: UiChange) => listeners.forEach((listener) => listener(change));
  const scope = options.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(options.namespace)}`;
  let listProblem: string | undefined;
  const applySets = startSupervisedInformer({
    client: options.client,
    path: applySetPath(options.namespace),
    transform: slimApplySet,
    logger: {
      ...options.logger,
      warn(object, message) {
        const error = (object as { err?: unknown }).err;
        if (error !== undefined) listProblem = messageOf(error);
        options.logger.warn(object, message);
      },
    },
    signal: options.signal,
    onEvent: ({ object }) => {
      const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
      notify({ namespace: String(metadata['namespace'] ?? ''), name: String(metadata['name'] ?? '') });
    },
  });
  const events = startSupervisedInformer({
    client: options.client,
    path: `/api/v1${scope}/events`,
    // Only the Events about ApplySets: the pages show no others, and the cluster's may be many.
    fieldSelector: `involvedObject.kind=${APPLYSET_KIND}`,
    transform: slimEvent,
    logger: options.logger,
    signal: options.signal,
    onEvent: ({ object }) => {
      const involved = isJsonObject(object['involvedObject']) ? object['involvedObject'] : {};
      notify({ namespace: String(involved['namespace'] ?? ''), name: String(involved['name'] ?? '') });
    },
  });
  const reader = createKubeObjectReader(options.client);
  return {
    synced: Promise.all([applySets.synced, events.synced]).then(() => undefined),
    applySets: () => applySets.list() as unknown as ApplySet[],
    applySet: (namespace, name) => applySets.get(`${namespace}/${name}`) as unknown as ApplySet | undefined,
    events: (namespace, name) => eventsOf(events.list(), namespace, name),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    readerFor: (applySet) => {
      const { kubeConfig } = lenientApplySetSpec(applySet.spec);
      return kubeConfig === undefined
        ? reader
        : options.remoteReader(applySet.metadata.namespace, kubeConfig);
    },
    // A hook Job's log is read where its objects are, as their reader reads them: here, as the user.
    hookLogClientFor: (applySet) =>
      lenientApplySetSpec(applySet.spec).kubeConfig === undefined ? options.client : REMOTE_LOGS_UNREAD,
    // Until the first list succeeds, the page says why it shows nothing rather than an empty fleet.
    problem: () => (applySets.hasSynced() ? undefined : listProblem),
    ...(options.preview === undefined ? {} : { preview: options.preview }),
  };
}

/**
 * Reads objects named as the inventory names them (no version) through discovery, as `client`; the
 * controller passes one mapper for every account it reads as, since discovery answers all alike.
 */
export function createKubeObjectReader(
  client: KubeClient,
  mapper = createRestMapper(client),
): UiObjectReader {
  const api = createKubeObjectApi(client);
  return async (ref, signal) => {
    const mapping = await mapper.resolveGroupKind(ref.group, ref.kind, signal);
    const namespace = mapping.scope === 'Namespaced' ? ref.namespace : '';
    return api.get(
      { group: mapping.group, version: mapping.version, resource: mapping.resource, namespace },
      ref.name,
      signal,
    );
  };
}

function slimApplySet(object: JsonObject): JsonObject {
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  const { managedFields: _managedFields, annotations, ...kept } = metadata;
  const small = isJsonObject(annotations)
    ? Object.fromEntries(
        Object.entries(annotations).filter(
          ([key, value]) =>
            INVENTORY_ANNOTATIONS.includes(key) ||
            (typeof value === 'string' && value.length <= MAX_KEPT_ANNOTATION_BYTES),
        ),
      )
    : {};
  return { ...object, metadata: { ...kept, annotations: small } };
}

/** What the page shows of an event; everything else (source, related objects) is dropped. */
export function slimEvent(object: JsonObject): JsonObject {
  const { metadata, involvedObject, type, reason, message, count, lastTimestamp, eventTime, firstTimestamp } =
    object;
  const meta = isJsonObject(metadata) ? metadata : {};
  return {
    metadata: {
      name: meta['name'] ?? '',
      namespace: meta['namespace'] ?? '',
      resourceVersion: meta['resourceVersion'] ?? '',
    },
    involvedObject: involvedObject ?? {},
    type: type ?? '',
    reason: reason ?? '',
    message: message ?? '',
    count: count ?? 1,
    time: lastTimestamp ?? eventTime ?? firstTimestamp ?? '',
  };
}

/** The events about one ApplySet, newest first. */
export function eventsOf(all: readonly JsonObject[], namespace: string, name: string): UiEvent[] {
  return all
    .filter((event) => {
      const involved = isJsonObject(event['involvedObject']) ? event['involvedObject'] : {};
      return (
        involved['kind'] === APPLYSET_KIND && involved['namespace'] === namespace && involved['name'] === name
      );
    })
    .map((event) => ({
      type: String(event['type']),
      reason: String(event['reason']),
      message: String(event['message']),
      time: String(event['time']),
      count: Number(event['count']),
    }))
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
}
