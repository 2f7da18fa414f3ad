/**
 * What the controller's informer keeps of each ApplySet. The cache only decides what to queue (spec,
 * generation, readiness, two request annotations), matches pushes and finds Secrets to poll; every
 * reconcile reads the ApplySet afresh. So the parts that can be large, and that nothing in the cache
 * reads, are dropped, as controller-runtime's caches strip managedFields: the managed fields, the
 * inventory the ApplySet carries as the set's parent (annotations of up to hundreds of KiB for a large
 * set), a `kubectl apply`'s copy of the spec, and `status.inventory` (capped at 128 KiB). For a fleet,
 * that is the difference between a cache the size of the specs and one the size of everything applied.
 */
import { COMPRESSED_INVENTORY_KEY } from '../../inventory/inventory-encoding.js';
import { MetadataKeys } from '../../inventory/metadata-keys.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import { LAST_APPLIED_ANNOTATION } from '../../merge/last-applied-configuration.js';

const DROPPED_ANNOTATIONS: readonly string[] = [
  LAST_APPLIED_ANNOTATION,
  MetadataKeys.lastAppliedObjects,
  COMPRESSED_INVENTORY_KEY,
  MetadataKeys.applySetContainsGroupKinds,
  MetadataKeys.applySetAdditionalNamespaces,
];

/** The ApplySet without what the informer's readers never look at; the input is not changed. */
export function informerView(applySet: JsonObject): JsonObject {
  const view: JsonObject = { ...applySet };
  const metadata = applySet['metadata'];
  if (isJsonObject(metadata)) {
    const { managedFields: _managedFields, ...kept } = metadata;
    const annotations = kept['annotations'];
    if (isJsonObject(annotations)) {
      kept['annotations'] = Object.fromEntries(
        Object.entries(annotations).filter(([key]) => !DROPPED_ANNOTATIONS.includes(key)),
      );
    }
    view['metadata'] = kept;
  }
  const status = applySet['status'];
  if (isJsonObject(status) && 'inventory' in status) {
    const { inventory: _inventory, ...kept } = status;
    view['status'] = kept;
  }
  return view;
}

/**
 * As informerView, keeping `status.inventory` (at most 128 KiB each): with the web view on, its
 * ApplySet page lists the set's objects from it, from memory as the fleet page reads the rest.
 */
export function informerViewWithInventory(applySet: JsonObject): JsonObject {
  const view = informerView(applySet);
  const status = applySet['status'];
  if (isJsonObject(status) && status['inventory'] !== undefined && isJsonObject(view['status'])) {
    view['status'] = { ...view['status'], inventory: status['inventory'] };
  }
  return view;
}
