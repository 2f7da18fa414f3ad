import type { ManifestObject } from '../manifests/manifest-object.js';
import type { GroupVersionKind } from '../manifests/object-ref.js';
import type { ResourceLocation } from '../kube/kube-object-api.js';
import type { RestMapping } from '../kube/rest-mapper.js';
import type { ObjectContext } from './run-context.js';

export async function locationOf(object: ManifestObject, context: ObjectContext): Promise<ResourceLocation> {
  const mapping = await context.mapper.resolve(gvkOf(object), context.signal);
  return locationIn(mapping, object.ref.namespace);
}

/** Where an object of this mapping lives: cluster-scoped kinds ignore the namespace. */
export function locationIn(mapping: RestMapping, namespace: string): ResourceLocation {
  return {
    group: mapping.group,
    version: mapping.version,
    resource: mapping.resource,
    namespace: mapping.scope === 'Namespaced' ? namespace : '',
  };
}

export function gvkOf(object: ManifestObject): GroupVersionKind {
  return { group: object.ref.group, version: object.version, kind: object.ref.kind };
}
