import type { KubeObjectApi, ResourceLocation } from '../kube/kube-object-api.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * Removes a set's claim on one object: the apply-owner annotation and the KEP-3659 part-of label,
 * nothing else. The last-applied annotation stays, so a later `kubectl apply` of the same file, or a
 * new set that adopts the object, still merges as before. The uid in the patch makes it apply to
 * exactly the object read (a uid cannot change: any other object of that name is refused).
 */
export async function releaseObject(
  api: KubeObjectApi,
  location: ResourceLocation,
  name: string,
  live: JsonObject,
  signal: AbortSignal | undefined,
): Promise<void> {
  const metadata = live['metadata'];
  const uid = isJsonObject(metadata) ? metadata['uid'] : undefined;
  const patch = {
    metadata: {
      ...(typeof uid === 'string' ? { uid } : {}),
      annotations: { [MetadataKeys.applyOwner]: null },
      labels: { [MetadataKeys.applySetPartOf]: null },
    },
  };
  await api.patch(location, name, 'application/merge-patch+json', stringifyJson(patch), signal);
}
