import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { jsonRemove, mergePatch } from './diff-step.js';
import { baseMetadata, randomMap, setRemoveOrNull, VALUES, type KindModel } from './kind-model.js';
import type { SeededRandom } from './seeded-random.js';

// The custom resource: JSON merge patch, where every list is replaced whole, at any depth.

const ITEM_NAMES = ['one', 'two', 'three'] as const;
const TAGS = ['x', 'y', 'z', 'w'] as const;
const BIG_INTEGERS = [
  9007199254740993n,
  9007199254740994n,
  -9223372036854775808n,
  9223372036854775807n,
] as const;

export const WIDGET_KIND = {
  resource: { plural: 'widgets' },
  yaml11: { path: ['spec', 'yaml11'], anyValue: true },
  create(random, name, crdGroup) {
    return {
      apiVersion: `${crdGroup}/v1`,
      kind: 'Widget',
      metadata: baseMetadata(random, name),
      spec: widgetSpec(random),
    };
  },
  mutations: [
    (random, m) => {
      m.spec = widgetSpec(random);
    },
    (random, m) => {
      const spec = m.spec as JsonObject;
      const items = Array.isArray(spec.items) ? spec.items : [];
      spec.items = random.chance(0.5) ? random.shuffle(items) : items.slice(1);
    },
    (random, m) => {
      const spec = m.spec as JsonObject;
      const config = isJsonObject(spec.config) ? spec.config : {};
      config[random.pick(['x', 'y', 'z'])] = random.chance(0.3) ? null : random.pick(VALUES);
      spec.config = config;
    },
    (random, m) => {
      const spec = m.spec as JsonObject;
      if (random.next() < 0.3) spec.size = null;
      else if (random.chance(0.4)) delete spec.size;
      // Now and then an int64 beyond 2^53, which a float64 would round (9007199254740993 → …992).
      else spec.size = random.chance(0.2) ? random.pick(BIG_INTEGERS) : random.int(1, 9);
    },
    // one item's nested lists: tags (scalars), ports (maps), or the item's own nested map
    (random, m) => {
      const spec = m.spec as JsonObject;
      const items = Array.isArray(spec.items) ? spec.items.filter(isJsonObject) : [];
      if (items.length === 0) return;
      const item = random.pick(items);
      switch (random.int(0, 2)) {
        case 0:
          setRemoveOrNull(random, item, 'tags', () => random.sample(TAGS, random.int(0, 3)));
          break;
        case 1:
          setRemoveOrNull(random, item, 'ports', () => itemPorts(random));
          break;
        default:
          setRemoveOrNull(random, item, 'limits', () => randomMap(random, ['cpu', 'memory'], 0));
      }
    },
    (random, m) => setRemoveOrNull(random, m.spec as JsonObject, 'matrix', () => matrix(random)),
  ],
  writers: (random, manifest) => {
    const spec = isJsonObject(manifest.spec) ? manifest.spec : {};
    return [
      mergePatch('a spec field added', { spec: { writerField: random.pick(VALUES) } }),
      mergePatch('the nested list replaced', { spec: { matrix: [[random.int(0, 9)]] } }),
      mergePatch('a config key set to null', { spec: { config: { [random.pick(['x', 'y', 'z'])]: null } } }),
      jsonRemove('kubectl patch --type json: remove the first item', '/spec/items/0'),
      ...(Array.isArray(spec.items)
        ? [jsonRemove('remove the first item’s tags', '/spec/items/0/tags')]
        : []),
    ];
  },
} satisfies KindModel;

function widgetSpec(random: SeededRandom): JsonObject {
  const spec: JsonObject = { color: random.pick(VALUES) };
  if (random.chance(0.6)) spec.size = random.int(1, 9);
  if (random.chance(0.6)) {
    spec.items = random.sample(ITEM_NAMES, random.int(1, 3)).map((n) => {
      const item: JsonObject = { name: n, weight: random.int(1, 5) };
      if (random.chance(0.4)) item.tags = random.sample(TAGS, random.int(0, 3));
      if (random.chance(0.3)) item.ports = itemPorts(random);
      return item;
    });
  }
  if (random.chance(0.6)) spec.config = randomMap(random, ['x', 'y', 'z']);
  if (random.chance(0.3)) spec.matrix = matrix(random);
  if (random.chance(0.2)) spec.nothing = null;
  return spec;
}

function itemPorts(random: SeededRandom): JsonObject[] {
  return random
    .sample([80, 443, 8080], random.int(1, 3))
    .map((port) => ({ port, ...(random.chance(0.4) ? { hosts: random.sample(['h1', 'h2'], 1) } : {}) }));
}

/** Lists of lists, some empty, one holding a null: a merge patch replaces them, never merges. */
function matrix(random: SeededRandom): JsonObject['matrix'] {
  return Array.from({ length: random.int(1, 3) }, () =>
    Array.from({ length: random.int(0, 3) }, () => (random.chance(0.1) ? null : random.int(0, 9))),
  );
}
