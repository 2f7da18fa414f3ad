import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
type InformerEventType = 'added' | 'modified' | 'deleted';

export interface InformerEvent {
  readonly type: InformerEventType;
  readonly object: JsonObject;
  /** The cached object before a modification or deletion. */
  readonly previous?: JsonObject;
}

/** The informer's objects by namespace and name; every change made to it is reported as an event. */
interface InformerCache {
  /**
   * A full LIST: new items are reported added, items whose resourceVersion moved modified, and cached
   * objects the LIST no longer has deleted (what a relist after 410 Gone must tell the handler).
   */
  replaceAll(items: readonly JsonObject[]): void;
  /** The object of one watch event: DELETED removes it, any other type stores it. */
  applyWatchEvent(type: string, object: JsonObject): void;
  list(): JsonObject[];
  /** The object with key `namespace/name` (`/name` for a cluster-scoped one). */
  get(key: string): JsonObject | undefined;
}

export function createInformerCache(onEvent: (event: InformerEvent) => void): InformerCache {
  const cache = new Map<string, JsonObject>();
  return {
    replaceAll(items) {
      const seen = new Set<string>();
      for (const item of items) {
        const key = keyOf(item);
        seen.add(key);
        const previous = cache.get(key);
        cache.set(key, item);
        if (previous === undefined) onEvent({ type: 'added', object: item });
        else if (resourceVersionOf(previous) !== resourceVersionOf(item))
          onEvent({ type: 'modified', object: item, previous });
      }
      for (const [key, previous] of [...cache]) {
        if (seen.has(key)) continue;
        cache.delete(key);
        onEvent({ type: 'deleted', object: previous, previous });
      }
    },

    applyWatchEvent(type, object) {
      const key = keyOf(object);
      const previous = cache.get(key);
      if (type === 'DELETED') {
        cache.delete(key);
        onEvent({ type: 'deleted', object, ...(previous === undefined ? {} : { previous }) });
        return;
      }
      cache.set(key, object);
      onEvent(previous === undefined ? { type: 'added', object } : { type: 'modified', object, previous });
    },

    list: () => [...cache.values()],
    get: (key) => cache.get(key),
  };
}

function keyOf(object: JsonObject): string {
  const metadata = object['metadata'];
  if (!isJsonObject(metadata)) return '/';
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  return `${namespace}/${String(metadata['name'])}`;
}

export function resourceVersionOf(object: JsonObject): string | undefined {
  const metadata = object['metadata'];
  if (!isJsonObject(metadata)) return undefined;
  const version = metadata['resourceVersion'];
  return typeof version === 'string' ? version : undefined;
}
