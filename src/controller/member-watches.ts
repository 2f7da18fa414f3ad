/**
 * Watches of the objects ApplySets hold, for the reconciles at rest (steady-runs.ts). Such a reconcile
 * needs one thing of each object: its resourceVersion, to learn that nothing changed. Read with a GET
 * each, that is one request per object per interval; where many sets hold objects of one kind in one
 * namespace and apply them as one account (a team's namespace of many apps, a fleet), one watch of
 * that collection answers them all from memory.
 *
 * A watch is opened as the account the sets apply as (impersonated; the controller itself with
 * --apply-as-controller), over the collection of one kind in one namespace, selecting the objects that
 * carry an ApplySet's part-of label: it sees nothing that account may not list. It asks for metadata
 * alone and keeps the name and resourceVersion of each object, nothing else. One is opened once
 * `minSets` ApplySets asked for the same collection, at most `maxWatches` are open (one unused for
 * `idleMs` is closed), and an account that may not list or watch the kind (403, 404) is not asked again
 * for REFUSED_MS. Until a watch has listed and while it is not watching (the server away, a relist
 * after 410), its collection is read with GETs, as without it: an answer from memory is never older
 * than the watch's own delivery (docs/architecture.md#steady-runs).
 */
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { resourcePath, type ResourceLocation } from '../kube/kube-object-api.js';
import { LruMap } from '../kube/lru-map.js';
import { resourceVersionOf } from '../kube/informer-cache.js';
import { startSupervisedInformer, type SupervisedInformer } from '../kube/supervised-informer.js';
import type { InformerLogger } from '../kube/watch-once.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';

export interface MemberWatchesOptions {
  /** A client acting as `user` (the controller itself when undefined), on a connection kept for watches. */
  readonly watcherAs: (user: string | undefined) => KubeClient;
  readonly logger: InformerLogger;
  /** Stops every watch. */
  readonly signal: AbortSignal;
  /** At most this many watches open at once (memberWatchesOf makes none for 0). */
  readonly maxWatches: number;
  /** How many ApplySets must ask for one collection before it is watched. */
  readonly minSets: number;
  /** A watch unused this long is closed; default 30 minutes. */
  readonly idleMs?: number;
  readonly now?: () => number;
}

export interface MemberWatches {
  /**
   * The resourceVersion of each of `names` in the collection `location` (namespaced), as a watch opened
   * as `user` last heard it: null for a name it does not hold (absent, or without a part-of label).
   * Undefined when no watch of it is open and watching: read them. Counts `setKey` toward opening one.
   */
  versionsOf(
    user: string | undefined,
    location: ResourceLocation,
    names: readonly string[],
    setKey: string,
  ): (string | null)[] | undefined;
  /** How many watches are open. */
  size(): number;
}

interface MemberWatch {
  readonly informer: SupervisedInformer;
  readonly stop: AbortController;
  lastUsed: number;
}

/** `--member-watches 16`, `--member-watch-min-sets 8`. */
export const DEFAULT_MEMBER_WATCHES = { maxWatches: 16, minSets: 8 } as const;
/** The most `--member-watches` may ask for. */
export const MAX_MEMBER_WATCHES = 256;

/** How long an account refused a watch (403, 404) is read with GETs before it is asked again. */
const REFUSED_MS = 10 * 60_000;
const DEFAULT_IDLE_MS = 30 * 60_000;
/** Objects per page of a watch's LIST: an answer holds this many before they are shrunk. */
const LIST_PAGE_SIZE = 100;
/** Collections counted toward a watch at once: the least recently asked are forgotten past it. */
const MAX_COUNTED_COLLECTIONS = 10_000;

function createMemberWatches(options: MemberWatchesOptions): MemberWatches {
  const { logger, signal, maxWatches, minSets } = options;
  const now = options.now ?? Date.now;
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const watches = new Map<string, MemberWatch>();
  const asking = new LruMap<string, Set<string>>(MAX_COUNTED_COLLECTIONS);
  const refused = new LruMap<string, number>(MAX_COUNTED_COLLECTIONS);

  const close = (key: string, why: string) => {
    const watch = watches.get(key);
    if (watch === undefined) return;
    watches.delete(key);
    watch.stop.abort();
    logger.info({ collection: key, why }, 'member watch closed');
  };

  // Idle watches are closed on a timer of their own: a fleet that stopped asking frees its sockets.
  const sweep = setInterval(
    () => {
      for (const [key, watch] of watches) if (now() - watch.lastUsed >= idleMs) close(key, 'unused');
    },
    Math.max(1_000, Math.floor(idleMs / 4)),
  );
  sweep.unref();
  signal.addEventListener(
    'abort',
    () => {
      clearInterval(sweep);
      for (const key of [...watches.keys()]) close(key, 'stopping');
    },
    { once: true },
  );

  const open = (key: string, user: string | undefined, location: ResourceLocation) => {
    const onRefused = (status: number) => {
      refused.set(key, now() + REFUSED_MS);
      watches.delete(key);
      logger.info({ collection: key, status }, 'member watch refused; its objects are read with GETs');
    };
    watches.set(key, startMemberWatch(options.watcherAs(user), location, { logger, signal, now, onRefused }));
    logger.info({ collection: key }, 'member watch opened');
  };

  const consider = (key: string, user: string | undefined, location: ResourceLocation, setKey: string) => {
    if (signal.aborted) return;
    const until = refused.get(key);
    if (until !== undefined) {
      if (until > now()) return;
      refused.delete(key);
    }
    let sets = asking.get(key);
    if (sets === undefined) {
      sets = new Set();
      asking.set(key, sets);
    }
    sets.add(setKey);
    if (sets.size < minSets || watches.size >= maxWatches) return;
    asking.delete(key);
    open(key, user, location);
  };

  return {
    versionsOf(user, location, names, setKey) {
      if (location.namespace === '') return undefined;
      const key = `${user ?? ''} ${resourcePath(location)}`;
      const watch = watches.get(key);
      if (watch === undefined) {
        consider(key, user, location, setKey);
        return undefined;
      }
      watch.lastUsed = now();
      const { informer } = watch;
      if (!informer.hasSynced() || !informer.isWatching()) return undefined;
      return names.map((name) => {
        const object = informer.get(`${location.namespace}/${name}`);
        return object === undefined ? null : (resourceVersionOf(object) ?? null);
      });
    },
    size: () => watches.size,
  };
}

/** A watch of the collection at `location`, with `client`; `onRefused` when it is refused for good. */
function startMemberWatch(
  client: KubeClient,
  location: ResourceLocation,
  how: Pick<MemberWatchesOptions, 'logger' | 'signal'> & {
    readonly now: () => number;
    readonly onRefused: (status: number) => void;
  },
): MemberWatch {
  const stop = new AbortController();
  const informer = startSupervisedInformer({
    client,
    path: resourcePath(location),
    labelSelector: MetadataKeys.applySetPartOf,
    pageSize: LIST_PAGE_SIZE,
    metadataOnly: true,
    transform: versionOnly,
    onEvent: () => undefined,
    logger: how.logger,
    signal: AbortSignal.any([how.signal, stop.signal]),
    // An account that may not list or watch the kind (403), a kind no longer served (404): not retried.
    giveUp: (error) => {
      if (!(error instanceof KubeApiError && (error.status === 403 || error.notFound))) return false;
      how.onRefused(error.status);
      return true;
    },
  });
  return { informer, stop, lastUsed: how.now() };
}

/**
 * The watches the controller's flags ask for (`settings`, DEFAULT_MEMBER_WATCHES when not given), or
 * none with `maxWatches` 0.
 */
export function memberWatchesOf(
  settings: Pick<MemberWatchesOptions, 'maxWatches' | 'minSets'> = DEFAULT_MEMBER_WATCHES,
  options: Omit<MemberWatchesOptions, 'maxWatches' | 'minSets'>,
): MemberWatches | undefined {
  return settings.maxWatches === 0 ? undefined : createMemberWatches({ ...options, ...settings });
}

/** What a watch keeps of an object: its namespace, name and resourceVersion. */
function versionOnly(object: JsonObject): JsonObject {
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  const kept: JsonObject = {};
  for (const field of ['namespace', 'name', 'resourceVersion']) {
    const value = metadata[field];
    if (typeof value === 'string') kept[field] = value;
  }
  return { metadata: kept };
}
