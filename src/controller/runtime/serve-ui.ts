/**
 * The web view as the controller serves it (`--ui-address`): the pages of src/ui/ over the
 * controller's own informer, each request's viewer checked with the API server (clusterUiAccess), and
 * each ApplySet's objects read as the account the ApplySet is applied as, so the view never reads
 * with more than that account's rights (docs/web-view-cluster.md).
 */
import { APPLYSET_KIND, type ApplySet } from '../../api/applyset-types.js';
import { listenOn } from '../../http/start-probe-server.js';
import { createRestMapper, type RestMapper } from '../../kube/rest-mapper.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import type { Logger } from '../../observability/create-logger.js';
import { clusterUiAccess } from '../../ui/cluster-access.js';
import { createUiServer } from '../../ui/create-ui-server.js';
import { REMOTE_LOGS_UNREAD, createKubeObjectReader, eventsOf, slimEvent } from '../../ui/kube-ui-data.js';
import type { UiChange, UiData } from '../../ui/ui-data.js';
import { applySetView } from '../../api/applyset-view.js';
import type { ControllerClients } from './controller-clients.js';
import type { RemoteCluster } from './remote-clusters.js';
import { remoteObjectReader } from './remote-object-reader.js';
import type { ControllerConfig } from './controller-config.js';
import { startSupervisedInformer, type SupervisedInformer } from '../../kube/supervised-informer.js';

/** The changes the open pages are told about: the controller's informer and the events feed it. */
export interface UiChangeFeed {
  /** An ApplySet (or the object an Event is about) changed. */
  notify(change: UiChange): void;
  subscribe(listener: (change: UiChange) => void): () => void;
}

export function createUiChangeFeed(): UiChangeFeed {
  const listeners = new Set<(change: UiChange) => void>();
  return {
    notify: (change) => listeners.forEach((listener) => listener(change)),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The namespace and name of an object, for the feed. */
export function changeOf(object: JsonObject): UiChange {
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  return { namespace: String(metadata['namespace'] ?? ''), name: String(metadata['name'] ?? '') };
}

interface ServeUiOptions {
  /**
   * `--ui-address` (e.g. `:8090`); `--namespace`, where the events are watched (undefined: everywhere);
   * the account an ApplySet without spec.serviceAccountName is applied as (undefined: the controller).
   */
  readonly config: Pick<
    ControllerConfig,
    'uiAddress' | 'namespace' | 'defaultServiceAccountName' | 'healthCheckExprs'
  >;
  readonly clients: Pick<ControllerClients, 'client' | 'unfenced' | 'readerAs' | 'remoteClusters'>;
  /** The controller's ApplySet informer: its objects keep status.inventory when the view is on. */
  readonly applySets: Pick<SupervisedInformer, 'list' | 'get'>;
  readonly changes: UiChangeFeed;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

export interface UiServing {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the Events informer the pages read and the web view's server on `--ui-address`. */
export async function serveUi(options: ServeUiOptions): Promise<UiServing | undefined> {
  const { uiAddress, namespace } = options.config;
  if (uiAddress === undefined) return undefined;
  const logger = options.logger.child({ server: 'ui' });
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  const events = startSupervisedInformer({
    client: options.clients.client,
    path: `/api/v1${scope}/events`,
    // Only the Events about ApplySets are kept: the controller's memory is not the cluster's events.
    fieldSelector: `involvedObject.kind=${APPLYSET_KIND}`,
    transform: slimEvent,
    logger: logger.child({ informer: 'events' }),
    signal: options.signal,
    onEvent: ({ object }) => {
      const involved = isJsonObject(object['involvedObject']) ? object['involvedObject'] : {};
      options.changes.notify(changeOf({ metadata: involved }));
    },
  });
  const ui = createUiServer({
    access: clusterUiAccess({ client: options.clients.unfenced(), logger }),
    data: controllerUiData(options, events, logger),
    signIn: true,
    ...(options.config.healthCheckExprs === undefined
      ? {}
      : { healthCheckExprs: options.config.healthCheckExprs }),
  });
  const listening = await listenOn(ui.server, uiAddress);
  return {
    port: listening.port,
    close: async () => {
      ui.closeUpdates();
      await Promise.all([listening.close(), events.done]);
    },
  };
}

/**
 * The view's data from memory: the ApplySets of the controller's informer and the Events of the
 * view's own. An ApplySet's objects are read live as its account (the tenancy of the reconcile:
 * spec.serviceAccountName, else the default account, else the controller under
 * --apply-as-controller), with one discovery mapper for every account, read as the controller; those
 * of a set with spec.kubeConfig on the cluster its kubeconfig names (remoteObjectReader).
 */
function controllerUiData(
  options: ServeUiOptions,
  events: Pick<SupervisedInformer, 'list'>,
  logger: Logger,
): UiData {
  const mapper = createRestMapper(options.clients.client);
  const remoteMappers = new WeakMap<RemoteCluster, RestMapper>();
  return {
    applySets: () => options.applySets.list() as unknown as ApplySet[],
    applySet: (namespace, name) =>
      options.applySets.get(`${namespace}/${name}`) as unknown as ApplySet | undefined,
    events: (namespace, name) => eventsOf(events.list(), namespace, name),
    subscribe: (listener) => options.changes.subscribe(listener),
    readerFor: (applySet) => {
      // The view a reconcile of it makes: the objects are read as the account it is applied as.
      const view = applySetView(applySet, options.config.defaultServiceAccountName);
      const { kubeConfig } = view.lenient;
      const namespace = applySet.metadata.namespace;
      const { user } = view.account;
      if (kubeConfig === undefined) return createKubeObjectReader(options.clients.readerAs(user), mapper);
      return remoteObjectReader(options.clients, { user, namespace, kubeConfig, remoteMappers, logger });
    },
    // Its hook Jobs' logs as its objects: as the account it is applied as.
    hookLogClientFor: (applySet) => {
      const view = applySetView(applySet, options.config.defaultServiceAccountName);
      if (view.lenient.kubeConfig !== undefined) return REMOTE_LOGS_UNREAD;
      return options.clients.readerAs(view.account.user);
    },
  };
}
