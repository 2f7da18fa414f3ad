/**
 * What the controller's informer keeps of each ApplySet. The cache decides what to queue (spec,
 * generation, readiness, two request annotations), matches pushes and finds Secrets to poll. The parts
 * that can be large are dropped when they are, as controller-runtime's caches strip managedFields: the
 * managed fields always; the inventory the ApplySet carries as the set's parent (annotations of up to
 * hundreds of KiB for a large set), a `kubectl apply`'s copy of the spec, and `status.inventory` (capped
 * at 128 KiB) when together they weigh more than WHOLE_VIEW_BYTES. For a fleet, that is the difference
 * between a cache the size of the specs and one the size of everything applied.
 *
 * A view that lost nothing but its managed fields is whole (isWholeView): the reconcile may start from
 * it instead of a GET (informed-applyset-reads.ts), which no reconcile of a set of a few objects then
 * sends at rest.
 *
 * A fleet's views repeat most of their strings (the conditions' messages and reasons, the revision, the
 * repository URL, the finalizer), and each parse of an answer makes its own copies: about 1 KiB of each
 * view of 2.8 KiB at 10,000 ApplySets. The view's strings are replaced with one shared instance of each
 * (shareStrings, through src/kube/shared-strings.ts): equal values, so nothing a reader sees changes.
 */
import { COMPRESSED_INVENTORY_KEY } from '../../inventory/inventory-encoding.js';
import { MetadataKeys } from '../../inventory/metadata-keys.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../manifests/json-value.js';
import { stringifyJson } from '../../manifests/lossless-json.js';
import { LAST_APPLIED_ANNOTATION } from '../../merge/last-applied-configuration.js';
import { sharedString } from '../../kube/shared-strings.js';

const DROPPED_ANNOTATIONS: readonly string[] = [
  LAST_APPLIED_ANNOTATION,
  MetadataKeys.lastAppliedObjects,
  COMPRESSED_INVENTORY_KEY,
  MetadataKeys.applySetContainsGroupKinds,
  MetadataKeys.applySetAdditionalNamespaces,
];

/**
 * What the droppable parts of one ApplySet may weigh (characters of the annotations, of the JSON of
 * `status.inventory`) and still be kept: a set of a few dozen objects. At 10,000 such sets, about
 * 1 KiB each.
 */
const WHOLE_VIEW_BYTES = 2048;

/** The inventory items past which `status.inventory` is not even measured: it weighs too much. */
const MEASURED_INVENTORY_ITEMS = 64;

/** The views that lost nothing but managed fields. */
const wholeViews = new WeakSet<JsonObject>();

/** Whether the view is the ApplySet as served, but for its managed fields. */
export function isWholeView(view: JsonObject): boolean {
  return wholeViews.has(view);
}

/** The ApplySet without what the informer's readers never look at; the input is not changed. */
export function informerView(applySet: JsonObject): JsonObject {
  const view: JsonObject = { ...applySet };
  const metadata = isJsonObject(applySet['metadata']) ? applySet['metadata'] : undefined;
  const annotations = isJsonObject(metadata?.['annotations']) ? metadata['annotations'] : {};
  const status = isJsonObject(applySet['status']) ? applySet['status'] : undefined;
  const whole = droppableWeight(annotations, status) <= WHOLE_VIEW_BYTES;
  if (metadata !== undefined) {
    const { managedFields: _managedFields, ...kept } = metadata;
    if (!whole && isJsonObject(metadata['annotations'])) {
      kept['annotations'] = Object.fromEntries(
        Object.entries(annotations).filter(([key]) => !DROPPED_ANNOTATIONS.includes(key)),
      );
    }
    view['metadata'] = kept;
  }
  if (!whole && status !== undefined && 'inventory' in status) {
    const { inventory: _inventory, ...kept } = status;
    view['status'] = kept;
  }
  if (whole) wholeViews.add(view);
  shareStrings(view, SHARED_SKIPPED);
  return view;
}

/**
 * Fields whose strings one ApplySet alone has (its name, uid, version, id and hash labels, inventory):
 * kept as they are rather than filling the table of shared ones.
 */
const SHARED_SKIPPED: ReadonlySet<string> = new Set([
  'name',
  'uid',
  'resourceVersion',
  'labels',
  'inventory',
  ...DROPPED_ANNOTATIONS,
]);

/**
 * Replaces, in place, the strings of `value` (but those under a key in `skipped`) with the shared
 * instance of each: the same characters, so neither the view nor the answer it shares objects with
 * changes for any reader.
 */
function shareStrings(value: JsonValue, skipped: ReadonlySet<string>): void {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const item = value[index] as JsonValue;
      if (typeof item === 'string') value[index] = sharedString(item);
      else shareStrings(item, skipped);
    }
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      if (skipped.has(key)) continue;
      const item = value[key] as JsonValue;
      if (typeof item === 'string') value[key] = sharedString(item);
      else shareStrings(item, skipped);
    }
  }
}

/** The characters of the droppable annotations and status.inventory (past a bound: more than kept). */
function droppableWeight(annotations: JsonObject, status: JsonObject | undefined): number {
  let weight = 0;
  for (const key of DROPPED_ANNOTATIONS) {
    const value = annotations[key];
    if (typeof value === 'string') weight += value.length;
  }
  const inventory = status?.['inventory'];
  if (inventory === undefined || weight > WHOLE_VIEW_BYTES) return weight;
  const items = isJsonObject(inventory) ? inventory['items'] : undefined;
  if (Array.isArray(items) && items.length > MEASURED_INVENTORY_ITEMS) return Number.POSITIVE_INFINITY;
  return weight + stringifyJson(inventory).length;
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
