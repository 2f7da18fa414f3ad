import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { GroupVersionKind } from '../manifests/object-ref.js';
import type { Scope, ScopeResolver } from '../manifests/scope-resolver.js';
import { KubeApiError, UnknownKindError } from './kube-api-error.js';
import type { KubeClient } from './kube-client.js';

export interface RestMapping {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly resource: string;
  readonly scope: Scope;
}

/**
 * Discovery limited to what a set needs: only the group-versions of its objects and of its inventory
 * are asked for (`GET /api/v1`, `GET /apis/<g>/<v>`, and `GET /apis/<g>` for the preferred version of
 * an inventory entry, which records no version), never a sweep of every API group. Answers are cached;
 * `refresh` asks again, for a kind that is unknown because its CRD was just created.
 */
export interface RestMapper {
  /** Loads the group-versions not yet cached, concurrently. A 404 caches an empty group-version. */
  load(groupVersions: Iterable<{ group: string; version: string }>, signal?: AbortSignal): Promise<void>;
  /** The mapping from the cache, or undefined; no request. */
  cached(gvk: GroupVersionKind): RestMapping | undefined;
  /** The mapping; refreshes the group-version once when the kind is not in the cache. */
  resolve(gvk: GroupVersionKind, signal?: AbortSignal): Promise<RestMapping>;
  /** The mapping of a group and kind at the group's preferred version (inventory entries). */
  resolveGroupKind(group: string, kind: string, signal?: AbortSignal): Promise<RestMapping>;
  refresh(group: string, version: string, signal?: AbortSignal): Promise<void>;
  /** A synchronous view of the cache for `parseManifestSet`. */
  scopeResolver(): ScopeResolver;
}

interface GroupVersionResources {
  readonly byKind: ReadonlyMap<string, RestMapping>;
}

export function createRestMapper(client: KubeClient): RestMapper {
  const groupVersions = new Map<string, Promise<GroupVersionResources>>();
  const preferred = new Map<string, Promise<string | undefined>>();
  const keyOf = (group: string, version: string) => (group === '' ? version : `${group}/${version}`);

  const fetchGroupVersion = async (group: string, version: string, signal?: AbortSignal) => {
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    let body: JsonValue;
    try {
      body = await client.request({ method: 'GET', path, signal });
    } catch (error) {
      if (error instanceof KubeApiError && error.notFound) return { byKind: new Map() };
      throw error;
    }
    const byKind = new Map<string, RestMapping>();
    const resources = isJsonObject(body) && Array.isArray(body['resources']) ? body['resources'] : [];
    for (const entry of resources) {
      if (!isJsonObject(entry)) continue;
      const { name, kind, namespaced } = entry;
      // Subresources (`deployments/scale`) share the kind of their parent; skip them.
      if (typeof name !== 'string' || typeof kind !== 'string' || name.includes('/')) continue;
      byKind.set(kind, {
        group,
        version,
        kind,
        resource: name,
        scope: namespaced === true ? 'Namespaced' : 'Cluster',
      });
    }
    return { byKind };
  };

  const load = (group: string, version: string, signal?: AbortSignal): Promise<GroupVersionResources> => {
    const key = keyOf(group, version);
    let entry = groupVersions.get(key);
    if (entry === undefined) {
      entry = fetchGroupVersion(group, version, signal);
      groupVersions.set(key, entry);
      // A failed discovery is not cached: the next call asks again.
      entry.catch(() => groupVersions.delete(key));
    }
    return entry;
  };

  const refresh = async (group: string, version: string, signal?: AbortSignal) => {
    groupVersions.delete(keyOf(group, version));
    await load(group, version, signal);
  };

  const cached = (gvk: GroupVersionKind): RestMapping | undefined =>
    settled.get(keyOf(gvk.group, gvk.version))?.byKind.get(gvk.kind);
  // The settled values, for the synchronous lookups.
  const settled = new Map<string, GroupVersionResources>();
  const loadSettled = async (group: string, version: string, signal?: AbortSignal) => {
    const resources = await load(group, version, signal);
    settled.set(keyOf(group, version), resources);
    return resources;
  };

  const resolve = async (gvk: GroupVersionKind, signal?: AbortSignal): Promise<RestMapping> => {
    const found = (await loadSettled(gvk.group, gvk.version, signal)).byKind.get(gvk.kind);
    if (found !== undefined) return found;
    await refresh(gvk.group, gvk.version, signal);
    const again = (await loadSettled(gvk.group, gvk.version, signal)).byKind.get(gvk.kind);
    if (again !== undefined) return again;
    throw new UnknownKindError(
      gvk.group,
      gvk.kind,
      gvk.version,
      'is its CustomResourceDefinition installed?',
    );
  };

  const preferredVersion = (group: string, signal?: AbortSignal): Promise<string | undefined> => {
    if (group === '') return Promise.resolve('v1');
    let entry = preferred.get(group);
    if (entry === undefined) {
      entry = client.request({ method: 'GET', path: `/apis/${group}`, signal }).then(
        (body) => {
          const pv = isJsonObject(body) ? body['preferredVersion'] : undefined;
          const version = isJsonObject(pv) ? pv['version'] : undefined;
          return typeof version === 'string' ? version : undefined;
        },
        (error: unknown) => {
          if (error instanceof KubeApiError && error.notFound) return undefined;
          throw error;
        },
      );
      preferred.set(group, entry);
      entry.catch(() => preferred.delete(group));
    }
    return entry;
  };

  return {
    async load(list, signal) {
      await Promise.all([...list].map(({ group, version }) => loadSettled(group, version, signal)));
    },
    cached,
    resolve,
    async resolveGroupKind(group, kind, signal) {
      let version = await preferredVersion(group, signal);
      if (version === undefined) {
        // The group may have appeared since (a CRD applied in this run): ask once more.
        preferred.delete(group);
        version = await preferredVersion(group, signal);
      }
      if (version === undefined)
        throw new UnknownKindError(group, kind, undefined, 'the API group is not served');
      return resolve({ group, version, kind }, signal);
    },
    refresh: async (group, version, signal) => {
      await refresh(group, version, signal);
      await loadSettled(group, version, signal);
    },
    scopeResolver: () => ({ scopeOf: (gvk) => cached(gvk)?.scope }),
  };
}
