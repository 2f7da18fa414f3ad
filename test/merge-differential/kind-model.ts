import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { jsonRemove, pointerToken, smp, type DiffStep } from './diff-step.js';
import type { SeededRandom } from './seeded-random.js';

export type Mutation = (random: SeededRandom, manifest: JsonObject) => void;

/** How one kind is generated, changed and written to by others in the differential test. */
export interface KindModel {
  /** The REST resource; cluster-scoped kinds get a name per side (run-sequence.ts). */
  readonly resource: { readonly plural: string; readonly clusterScoped?: boolean };
  create(random: SeededRandom, name: string, crdGroup: string): JsonObject;
  /** Changes to the manifest's own fields, each changing a copy in place. */
  readonly mutations: readonly Mutation[];
  /** Other writers' changes beyond the ones every kind gets (`commonWriters`). */
  writers?(random: SeededRandom, manifest: JsonObject): DiffStep[];
  /** Where YAML 1.1 keys and values may be written, and whether values may be other than strings. */
  readonly yaml11?: { readonly path: readonly string[]; readonly anyValue: boolean };
}

// Pools: small, so lists collide on merge keys and steps add, remove and reorder the same items.
const LABEL_KEYS = ['tier', 'team', 'env', 'track'] as const;
export const VALUES = ['a', 'b', 'c', 'blue', 'green'] as const;
const FINALIZERS = ['example.com/a', 'example.com/b', 'example.com/c'] as const;

export function randomMap(random: SeededRandom, keys: readonly string[], min = 1): JsonObject {
  return Object.fromEntries(
    random.sample(keys, random.int(min, keys.length)).map((k) => [k, random.pick(VALUES)]),
  );
}

/** A field set, removed or set to null: the three things a manifest can say about it. */
export function setRemoveOrNull(
  random: SeededRandom,
  object: JsonObject,
  key: string,
  value: () => JsonObject[keyof JsonObject],
  nullChance = 0.15,
  removeChance = 0.25,
): void {
  const roll = random.next();
  if (roll < nullChance) object[key] = null;
  else if (roll < nullChance + removeChance) delete object[key];
  else object[key] = value();
}

/** Removes `key` of `object` with `removeChance`, or else sets it to `value()`; never null. */
export function removeOrSet(
  random: SeededRandom,
  object: JsonObject,
  key: string,
  removeChance: number,
  value: () => JsonObject[keyof JsonObject],
): void {
  if (random.chance(removeChance)) delete object[key];
  else object[key] = value();
}

export const METADATA_MUTATIONS: readonly Mutation[] = [
  (random, m) => {
    const metadata = m.metadata as JsonObject;
    if (random.chance(0.15)) metadata.labels = null;
    else if (random.chance(0.2)) delete metadata.labels;
    else metadata.labels = randomMap(random, LABEL_KEYS);
  },
  (random, m) => {
    const metadata = m.metadata as JsonObject;
    if (random.chance(0.3)) delete metadata.annotations;
    else metadata.annotations = { 'example.com/note': `note-${random.int(0, 9)}` };
  },
  (random, m) => {
    const metadata = m.metadata as JsonObject;
    const roll = random.next();
    if (roll < 0.15) metadata.finalizers = null;
    else if (roll < 0.35) delete metadata.finalizers;
    else metadata.finalizers = random.sample(FINALIZERS, random.int(1, FINALIZERS.length));
  },
];

export function baseMetadata(random: SeededRandom, name: string): JsonObject {
  const metadata: JsonObject = { name };
  if (random.chance(0.6)) metadata.labels = randomMap(random, LABEL_KEYS);
  if (random.chance(0.3)) metadata.annotations = { 'example.com/note': 'first' };
  if (random.chance(0.3)) metadata.finalizers = random.sample(FINALIZERS, random.int(1, 2));
  return metadata;
}

/**
 * What any writer may do to any object: `kubectl label` and `annotate`, a finalizer added, a
 * finalizer taken out with the strategic `$deleteFromPrimitiveList` directive, and a label removed by
 * a JSON patch. Custom resources take no strategic merge patch: the caller turns those into merge
 * patches and leaves the directive out.
 */
export function commonWriters(random: SeededRandom, manifest: JsonObject): DiffStep[] {
  const labels = isJsonObject((manifest.metadata as JsonObject).labels)
    ? Object.keys((manifest.metadata as JsonObject).labels as JsonObject)
    : [];
  const label = labels.length > 0 ? random.pick(labels) : random.pick(LABEL_KEYS);
  return [
    smp('kubectl label', { metadata: { labels: { 'writer.example.com/owner': random.pick(VALUES) } } }),
    smp('kubectl annotate', {
      metadata: { annotations: { 'writer.example.com/seen': random.pick(VALUES) } },
    }),
    smp('a finalizer added', { metadata: { finalizers: ['writer.example.com/hold'] } }),
    smp('a finalizer removed ($deleteFromPrimitiveList)', {
      metadata: { '$deleteFromPrimitiveList/finalizers': [random.pick(FINALIZERS)] },
    }),
    jsonRemove(`kubectl patch --type json: remove label ${label}`, `/metadata/labels/${pointerToken(label)}`),
  ];
}
