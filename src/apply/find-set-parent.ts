import { rethrowAbort } from '../errors/rethrow-abort.js';
import type { ApplySetParent } from './apply-set-contract.js';
import type { KubeClient } from '../kube/kube-client.js';
import { resourcePath, type ResourceLocation } from '../kube/kube-object-api.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { isJsonObject } from '../manifests/json-value.js';

/** A kind a set's apply-config object can be: its location across all namespaces and how to print it. */
export interface ParentKind {
  readonly location: ResourceLocation;
  /** e.g. `configmap` or `applyset.applyset.dev`, as kubectl prints the type. */
  readonly type: string;
}

/**
 * Names the set that owns an object by its apply-config object, `configmap/web-set -n shop`, from the
 * uid in the object's apply-owner annotation. Users know their sets by name, not by uid. One LIST
 * per parent kind, across namespaces and narrowed to apply-config objects (the KEP-3659 id label),
 * made only when the first conflict is described and shared by the rest of the run. Best effort: an
 * identity that may not list those kinds cluster-wide gets undefined, and the caller prints the uid.
 */
export function createSetParentFinder(
  client: KubeClient,
  kinds: readonly ParentKind[],
  signal: AbortSignal | undefined,
): (uid: string) => Promise<string | undefined> {
  let byUid: Promise<Map<string, string>> | undefined;
  const load = async () => {
    const found = new Map<string, string>();
    for (const { location, type } of kinds) {
      let list;
      try {
        list = await client.request({
          method: 'GET',
          path: resourcePath({ ...location, namespace: '' }),
          query: { labelSelector: MetadataKeys.applySetId },
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        rethrowAbort(error);
        continue;
      }
      const items = isJsonObject(list) && Array.isArray(list['items']) ? list['items'] : [];
      for (const item of items) {
        const metadata = isJsonObject(item) ? item['metadata'] : undefined;
        if (!isJsonObject(metadata)) continue;
        const { uid, name, namespace } = metadata;
        if (typeof uid !== 'string' || typeof name !== 'string') continue;
        found.set(uid, `${type}/${name}${typeof namespace === 'string' ? ` -n ${namespace}` : ''}`);
      }
    }
    return found;
  };
  return async (uid) => {
    byUid ??= load();
    return (await byUid).get(uid);
  };
}

/** Sets whose parents are ConfigMaps (the command's) or of this run's own parent kind. */
export function setParentKinds(parent: ApplySetParent): ParentKind[] {
  const configMaps: ParentKind = {
    location: { group: '', version: 'v1', resource: 'configmaps', namespace: '' },
    type: 'configmap',
  };
  if (parent.group === '' && parent.resource === 'configmaps') return [configMaps];
  const kind = parent.kind.toLowerCase();
  return [
    configMaps,
    {
      location: { group: parent.group, version: parent.version, resource: parent.resource, namespace: '' },
      type: parent.group === '' ? kind : `${kind}.${parent.group}`,
    },
  ];
}
