import { isJsonObject, type JsonObject, type JsonValue } from '../../src/manifests/json-value.js';
import { jsonRemove, pointerToken, smp } from './diff-step.js';
import {
  baseMetadata,
  randomMap,
  removeOrSet,
  setRemoveOrNull,
  VALUES,
  type KindModel,
} from './kind-model.js';
import type { SeededRandom } from './seeded-random.js';

// Kinds of the core and policy groups, and PriorityClass (cluster-scoped).

export const CORE_KINDS = {
  Service: {
    resource: { plural: 'services' },
    create(random, name) {
      const spec: JsonObject = {
        selector: { app: name, ...randomMap(random, ['tier'], 0) },
        ports: servicePorts(random),
      };
      if (random.chance(0.3)) spec.type = 'ClusterIP';
      if (random.chance(0.3)) spec.sessionAffinity = 'ClientIP';
      return { apiVersion: 'v1', kind: 'Service', metadata: baseMetadata(random, name), spec };
    },
    mutations: [
      (random, m) => {
        const spec = m.spec as JsonObject;
        const ports = Array.isArray(spec.ports) ? spec.ports : [];
        spec.ports = random.chance(0.4) && ports.length > 1 ? random.shuffle(ports) : servicePorts(random);
      },
      (random, m) => {
        const spec = m.spec as JsonObject;
        const name = String((m.metadata as JsonObject).name);
        spec.selector = { app: name, ...randomMap(random, ['tier', 'track'], 0) };
      },
      (random, m) =>
        removeOrSet(random, m.spec as JsonObject, 'publishNotReadyAddresses', 0.5, () => random.chance(0.5)),
    ],
    writers: (random, manifest) => {
      const ports = Array.isArray((manifest.spec as JsonObject).ports)
        ? (manifest.spec as JsonObject).ports
        : [];
      const port = (ports as JsonObject[])[0]?.port ?? 80;
      return [
        smp('a port added', { spec: { ports: [{ name: 'writer', port: 9999 }] } }),
        smp('a port deleted ($patch: delete)', { spec: { ports: [{ port, $patch: 'delete' }] } }),
        smp('a selector key added', { spec: { selector: { writer: random.pick(VALUES) } } }),
      ];
    },
  },
  ConfigMap: {
    resource: { plural: 'configmaps' },
    yaml11: { path: ['data'], anyValue: false },
    create(random, name) {
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: baseMetadata(random, name),
        data: configData(random),
      };
    },
    mutations: [
      (random, m) => {
        m.data = configData(random);
      },
      (random, m) => {
        const data = isJsonObject(m.data) ? m.data : {};
        const keys = Object.keys(data);
        if (keys.length > 0) data[random.pick(keys)] = random.chance(0.3) ? null : `v${random.int(0, 9)}`;
        m.data = data;
      },
      (random, m) =>
        removeOrSet(random, m, 'binaryData', 0.5, () => ({
          blob: Buffer.from(`bin-${random.int(0, 9)}`).toString('base64'),
        })),
    ],
    writers: (random, manifest) => {
      const keys = isJsonObject(manifest.data) ? Object.keys(manifest.data) : [];
      const key = keys.length > 0 ? random.pick(keys) : 'a';
      return [
        smp('a key added', { data: { 'writer-key': random.pick(VALUES) } }),
        smp(`a key set to null (${key})`, { data: { [key]: null } }),
        jsonRemove(`kubectl patch --type json: remove data ${key}`, `/data/${pointerToken(key)}`),
      ];
    },
  },
  Secret: {
    resource: { plural: 'secrets' },
    create(random, name) {
      const secret: JsonObject = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: baseMetadata(random, name),
        type: 'Opaque',
        data: secretData(random),
      };
      // stringData is write-only: the server folds it into data, so every apply sends it again.
      if (random.chance(0.3)) secret.stringData = { plain: `p${random.int(0, 9)}` };
      return secret;
    },
    mutations: [
      (random, m) => {
        m.data = secretData(random);
      },
      (random, m) => removeOrSet(random, m, 'stringData', 0.5, () => ({ plain: `p${random.int(0, 9)}` })),
    ],
    writers: () => [smp('a key added', { data: { 'writer-key': Buffer.from('w').toString('base64') } })],
  },
  PodDisruptionBudget: {
    resource: { plural: 'poddisruptionbudgets' },
    create(random, name) {
      const spec: JsonObject = { selector: { matchLabels: { app: name } }, ...budget(random) };
      return {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: baseMetadata(random, name),
        spec,
      };
    },
    mutations: [
      (random, m) => {
        const spec = m.spec as JsonObject;
        delete spec.minAvailable;
        delete spec.maxUnavailable;
        Object.assign(spec, budget(random));
      },
      (random, m) => {
        const spec = m.spec as JsonObject;
        const name = String((m.metadata as JsonObject).name);
        spec.selector = random.chance(0.3)
          ? { matchLabels: { app: name }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }
          : { matchLabels: { app: name, ...randomMap(random, ['tier'], 0) } };
      },
      (random, m) =>
        removeOrSet(random, m.spec as JsonObject, 'unhealthyPodEvictionPolicy', 0.5, () =>
          random.pick(['IfHealthyBudget', 'AlwaysAllow']),
        ),
    ],
  },
  PriorityClass: {
    // Cluster-scoped. `value` and `preemptionPolicy` are immutable: changing them is refused on both sides.
    resource: { plural: 'priorityclasses', clusterScoped: true },
    create(random, name) {
      const out: JsonObject = {
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: baseMetadata(random, name),
        value: random.int(1, 1000),
      };
      if (random.chance(0.5)) out.description = `class ${random.pick(VALUES)}`;
      if (random.chance(0.3)) out.preemptionPolicy = random.pick(['Never', 'PreemptLowerPriority']);
      if (random.chance(0.3)) out.globalDefault = false;
      return out;
    },
    mutations: [
      (random, m) => setRemoveOrNull(random, m, 'description', () => `class ${random.pick(VALUES)}`),
      (random, m) => {
        if (random.chance(0.2)) m.value = random.int(1, 1000);
      },
      (random, m) => {
        if (random.chance(0.2)) m.preemptionPolicy = random.pick(['Never', 'PreemptLowerPriority']);
      },
    ],
    writers: (random) => [smp('a description set', { description: `writer ${random.pick(VALUES)}` })],
  },
} satisfies Record<string, KindModel>;

function servicePorts(random: SeededRandom): JsonObject[] {
  return random.sample([80, 443, 8080, 9000], random.int(1, 3)).map((port) => {
    const out: JsonObject = { name: `p${port}`, port };
    if (random.chance(0.5)) out.targetPort = random.chance(0.5) ? port + 1 : `http`;
    if (random.chance(0.3)) out.protocol = 'TCP';
    return out;
  });
}

function configData(random: SeededRandom): JsonObject {
  const keys = random.sample(['a', 'b', 'c', 'd', 'e', 'config.yaml'], random.int(1, 5));
  return Object.fromEntries(
    keys.map((k) => [
      k,
      k.endsWith('.yaml') ? `key: ${random.pick(VALUES)}\nlist: [1, 2]\n` : random.pick(VALUES),
    ]),
  );
}

function secretData(random: SeededRandom): JsonObject {
  const keys = random.sample(['user', 'password', 'token'], random.int(1, 3));
  return Object.fromEntries(
    keys.map((k) => [k, Buffer.from(`${k}-${random.int(0, 99)}`).toString('base64')]),
  );
}

function budget(random: SeededRandom): JsonObject {
  const value: JsonValue = random.chance(0.5) ? random.int(0, 2) : random.pick(['25%', '50%']);
  return random.chance(0.5) ? { minAvailable: value } : { maxUnavailable: value };
}
