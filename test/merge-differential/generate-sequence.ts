import { isJsonObject, type JsonObject, type JsonValue } from '../../src/manifests/json-value.js';
import { SeededRandom } from './seeded-random.js';

export const DIFF_KINDS = [
  'Deployment',
  'Service',
  'ConfigMap',
  'Secret',
  'StatefulSet',
  'PodDisruptionBudget',
  'Widget',
] as const;
export type DiffKind = (typeof DIFF_KINDS)[number];

export type WriterContentType = 'application/strategic-merge-patch+json' | 'application/merge-patch+json';

/** One step of a sequence: apply a manifest version, or let another writer change the live object. */
export type DiffStep =
  | { readonly type: 'apply'; readonly manifest: JsonObject }
  | {
      readonly type: 'write';
      readonly description: string;
      readonly contentType: WriterContentType;
      readonly patch: JsonObject;
    };

export interface DiffSequence {
  readonly seed: number;
  readonly kind: DiffKind;
  readonly name: string;
  readonly steps: readonly DiffStep[];
}

/** The kind a seed exercises: seeds cycle through the kinds, so any window of seeds covers them all. */
export function kindOfSeed(seed: number): DiffKind {
  return DIFF_KINDS[seed % DIFF_KINDS.length] as DiffKind;
}

/**
 * A random but replayable sequence: create from a manifest, then a few steps that each change the
 * manifest and apply it, re-apply it unchanged, or let another writer patch the live object. Manifests
 * carry no namespace; the runner applies each version into two namespaces. Everything is a function
 * of `seed` (and the CRD group, which only names the custom resource's apiVersion).
 */
export function generateSequence(seed: number, crdGroup: string): DiffSequence {
  const random = new SeededRandom(seed);
  const kind = kindOfSeed(seed);
  const name = `${kind.toLowerCase()}-${seed}`;
  const model = MODELS[kind];
  let manifest = model.create(random, name, crdGroup);
  const steps: DiffStep[] = [{ type: 'apply', manifest }];
  const count = random.int(2, 5);
  for (let i = 0; i < count; i++) {
    const roll = random.next();
    if (roll < 0.55) {
      manifest = mutateManifest(random, manifest, model);
      steps.push({ type: 'apply', manifest });
    } else if (roll < 0.85) {
      steps.push(writerStep(random, kind, manifest));
    } else {
      steps.push({ type: 'apply', manifest });
    }
  }
  if (steps.at(-1)?.type === 'write') steps.push({ type: 'apply', manifest });
  return { seed, kind, name, steps };
}

interface KindModel {
  create(random: SeededRandom, name: string, crdGroup: string): JsonObject;
  /** Changes to the manifest's own fields, each changing a copy in place. */
  readonly mutations: readonly ((random: SeededRandom, manifest: JsonObject) => void)[];
}

function mutateManifest(random: SeededRandom, manifest: JsonObject, model: KindModel): JsonObject {
  const next = structuredClone(manifest);
  const mutations = [...model.mutations, ...METADATA_MUTATIONS];
  for (let i = random.int(1, 3); i > 0; i--) random.pick(mutations)(random, next);
  return next;
}

// ---------------------------------------------------------------------------------------------------
// Pools: small, so lists collide on merge keys and steps add, remove and reorder the same items.

const LABEL_KEYS = ['tier', 'team', 'env', 'track'] as const;
const VALUES = ['a', 'b', 'c', 'blue', 'green'] as const;
const FINALIZERS = ['example.com/a', 'example.com/b', 'example.com/c'] as const;
const CONTAINER_NAMES = ['app', 'proxy', 'logger', 'helper'] as const;
const IMAGES = ['nginx:1.25', 'nginx:1.27', 'busybox:1.36'] as const;
const ENV_NAMES = ['A', 'B', 'C', 'D', 'E'] as const;
const CONTAINER_PORTS = [80, 443, 8080, 9090] as const;
const VOLUME_NAMES = ['data', 'config', 'cache'] as const;
const TOLERATION_KEYS = ['dedicated', 'gpu', 'spot'] as const;

function randomMap(random: SeededRandom, keys: readonly string[], min = 1): JsonObject {
  return Object.fromEntries(
    random.sample(keys, random.int(min, keys.length)).map((k) => [k, random.pick(VALUES)]),
  );
}

const METADATA_MUTATIONS: readonly ((random: SeededRandom, manifest: JsonObject) => void)[] = [
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

function baseMetadata(random: SeededRandom, name: string): JsonObject {
  const metadata: JsonObject = { name };
  if (random.chance(0.6)) metadata.labels = randomMap(random, LABEL_KEYS);
  if (random.chance(0.3)) metadata.annotations = { 'example.com/note': 'first' };
  if (random.chance(0.3)) metadata.finalizers = random.sample(FINALIZERS, random.int(1, 2));
  return metadata;
}

// ---------------------------------------------------------------------------------------------------
// Pod templates (Deployment, StatefulSet).

function container(random: SeededRandom, name: string, volumes: readonly string[]): JsonObject {
  const out: JsonObject = { name, image: random.pick(IMAGES) };
  if (random.chance(0.4)) out.args = random.sample(['--a', '--b', '--c', '--d'], random.int(1, 3));
  if (random.chance(0.6)) {
    out.ports = random.sample(CONTAINER_PORTS, random.int(1, 3)).map((containerPort) => {
      const port: JsonObject = { containerPort };
      if (random.chance(0.3)) port.protocol = 'TCP';
      if (random.chance(0.3)) port.name = `p${containerPort}`;
      return port;
    });
  }
  if (random.chance(0.6)) out.env = random.sample(ENV_NAMES, random.int(1, 4)).map((n) => envVar(random, n));
  if (volumes.length > 0 && random.chance(0.6)) {
    out.volumeMounts = random
      .sample(volumes, random.int(1, volumes.length))
      .map((volume) => ({ name: volume, mountPath: `/mnt/${volume}` }));
  }
  if (random.chance(0.2)) out.resources = { limits: { cpu: random.pick(['100m', '200m']) } };
  return out;
}

function envVar(random: SeededRandom, name: string): JsonObject {
  // value → valueFrom and back: EnvVar has no retainKeys, the K11 quirk.
  return random.chance(0.2)
    ? { name, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }
    : { name, value: random.pick(VALUES) };
}

function volume(random: SeededRandom, name: string): JsonObject {
  // Switching the source exercises retainKeys on volumes (K21, K22).
  return random.chance(0.5) ? { name, emptyDir: {} } : { name, configMap: { name: `cm-${name}` } };
}

function podSpec(random: SeededRandom): JsonObject {
  const volumes = random.sample(VOLUME_NAMES, random.int(0, 2));
  const spec: JsonObject = {
    containers: random.sample(CONTAINER_NAMES, random.int(1, 3)).map((n) => container(random, n, volumes)),
  };
  if (volumes.length > 0) spec.volumes = volumes.map((n) => volume(random, n));
  if (random.chance(0.3)) spec.tolerations = tolerations(random);
  return spec;
}

function tolerations(random: SeededRandom): JsonObject[] {
  return random
    .sample(TOLERATION_KEYS, random.int(1, 3))
    .map((key) => ({ key, operator: 'Exists', effect: 'NoSchedule' }));
}

function podTemplate(random: SeededRandom, app: string): JsonObject {
  const labels: JsonObject = { app, ...(random.chance(0.4) ? { track: random.pick(VALUES) } : {}) };
  return { metadata: { labels }, spec: podSpec(random) };
}

function templateSpec(manifest: JsonObject): JsonObject {
  const template = (manifest.spec as JsonObject).template as JsonObject;
  return template.spec as JsonObject;
}

function containersOf(manifest: JsonObject): JsonObject[] {
  const containers = templateSpec(manifest).containers;
  return Array.isArray(containers) ? containers.filter(isJsonObject) : [];
}

function volumeNames(spec: JsonObject): string[] {
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  return volumes.filter(isJsonObject).map((v) => String(v.name));
}

/** Keeps volumeMounts pointing at volumes the pod has, so the server accepts the manifest. */
function dropDanglingMounts(spec: JsonObject): void {
  const names = new Set(volumeNames(spec));
  for (const c of Array.isArray(spec.containers) ? spec.containers.filter(isJsonObject) : []) {
    if (!Array.isArray(c.volumeMounts)) continue;
    c.volumeMounts = c.volumeMounts.filter((m) => isJsonObject(m) && names.has(String(m.name)));
    if (c.volumeMounts.length === 0) delete c.volumeMounts;
  }
}

const POD_TEMPLATE_MUTATIONS: readonly ((random: SeededRandom, manifest: JsonObject) => void)[] = [
  // add, remove or reorder containers
  (random, m) => {
    const spec = templateSpec(m);
    const existing = containersOf(m);
    const roll = random.next();
    if (roll < 0.35 && existing.length < CONTAINER_NAMES.length) {
      const free = CONTAINER_NAMES.filter((n) => !existing.some((c) => c.name === n));
      const added = container(random, random.pick(free), volumeNames(spec));
      const at = random.int(0, existing.length);
      spec.containers = [...existing.slice(0, at), added, ...existing.slice(at)];
    } else if (roll < 0.6 && existing.length > 1) {
      spec.containers = random.sample(existing, existing.length - 1);
    } else {
      spec.containers = random.shuffle(existing);
    }
  },
  // change one container: image, args, ports, env, volumeMounts, or null a list
  (random, m) => {
    const spec = templateSpec(m);
    const c = random.pick(containersOf(m));
    switch (random.int(0, 6)) {
      case 0:
        c.image = random.pick(IMAGES);
        break;
      case 1:
        if (random.next() < 0.25) c.args = null;
        else if (random.chance(0.33)) delete c.args;
        else c.args = random.sample(['--a', '--b', '--c', '--d'], random.int(1, 3));
        break;
      case 2: {
        const ports = Array.isArray(c.ports) ? c.ports.filter(isJsonObject) : [];
        if (random.chance(0.3)) delete c.ports;
        else if (random.chance(0.5) && ports.length > 1) c.ports = random.shuffle(ports);
        else
          c.ports = random
            .sample(CONTAINER_PORTS, random.int(1, 3))
            .map((containerPort) => ({ containerPort }));
        break;
      }
      case 3: {
        const env = Array.isArray(c.env) ? c.env.filter(isJsonObject) : [];
        const roll = random.next();
        if (roll < 0.15) c.env = null;
        else if (roll < 0.3) delete c.env;
        else if (roll < 0.5 && env.length > 1) c.env = random.shuffle(env);
        else if (roll < 0.7 && env.length > 0) c.env = random.sample(env, env.length - 1);
        else c.env = random.sample(ENV_NAMES, random.int(1, 4)).map((n) => envVar(random, n));
        break;
      }
      case 4: {
        const volumes = volumeNames(spec);
        if (volumes.length === 0 || random.chance(0.3)) delete c.volumeMounts;
        else {
          c.volumeMounts = random.sample(volumes, random.int(1, volumes.length)).map((v) => ({
            name: v,
            mountPath: `/mnt/${v}`,
            ...(random.chance(0.3) ? { readOnly: true } : {}),
          }));
        }
        break;
      }
      case 5:
        if (random.chance(0.5)) delete c.resources;
        else c.resources = { limits: { cpu: random.pick(['100m', '200m']) }, requests: { cpu: '50m' } };
        break;
      default:
        c.imagePullPolicy = random.pick(['Always', 'IfNotPresent']);
    }
  },
  // volumes: add, remove, switch source, reorder
  (random, m) => {
    const spec = templateSpec(m);
    const volumes = Array.isArray(spec.volumes) ? spec.volumes.filter(isJsonObject) : [];
    const roll = random.next();
    if (roll < 0.3) {
      spec.volumes = random.sample(VOLUME_NAMES, random.int(1, 3)).map((n) => volume(random, n));
    } else if (roll < 0.5 && volumes.length > 0) {
      spec.volumes = random.sample(volumes, volumes.length - 1);
      if (spec.volumes.length === 0) delete spec.volumes;
    } else if (roll < 0.7 && volumes.length > 0) {
      spec.volumes = volumes.map((v) => (random.chance(0.5) ? volume(random, String(v.name)) : v));
    } else {
      spec.volumes = random.shuffle(volumes);
      if (volumes.length === 0) delete spec.volumes;
    }
    dropDanglingMounts(spec);
  },
  // tolerations (an atomic list): set, reorder, remove, null
  (random, m) => {
    const spec = templateSpec(m);
    const roll = random.next();
    if (roll < 0.15) spec.tolerations = null;
    else if (roll < 0.35) delete spec.tolerations;
    else if (roll < 0.55 && Array.isArray(spec.tolerations))
      spec.tolerations = random.shuffle(spec.tolerations);
    else spec.tolerations = tolerations(random);
  },
  // pod template labels (the selector's `app` stays)
  (random, m) => {
    const template = (m.spec as JsonObject).template as JsonObject;
    const metadata = template.metadata as JsonObject;
    const labels = metadata.labels as JsonObject;
    metadata.labels = { app: labels.app ?? null, ...randomMap(random, ['track', 'team'], 0) };
  },
];

function workloadWriters(random: SeededRandom, manifest: JsonObject): DiffStep[] {
  const first = containersOf(manifest)[0];
  const steps: DiffStep[] = [
    smp('kubectl scale', { spec: { replicas: random.int(0, 5) } }),
    smp('a sidecar added by another controller', {
      spec: { template: { spec: { containers: [{ name: 'injected', image: 'busybox:1.36' }] } } },
    }),
    smp('kubectl rollout restart', {
      spec: {
        template: {
          metadata: {
            annotations: { 'kubectl.kubernetes.io/restartedAt': `2024-01-0${random.int(1, 9)}T00:00:00Z` },
          },
        },
      },
    }),
  ];
  if (first !== undefined) {
    steps.push(
      smp('an env var added to the first container', {
        spec: {
          template: {
            spec: {
              containers: [
                { name: first.name ?? null, env: [{ name: 'INJECTED', value: random.pick(VALUES) }] },
              ],
            },
          },
        },
      }),
    );
  }
  return steps;
}

// ---------------------------------------------------------------------------------------------------
// The kinds.

const MODELS: Record<DiffKind, KindModel> = {
  Deployment: {
    create(random, name) {
      const spec: JsonObject = {
        selector: { matchLabels: { app: name } },
        template: podTemplate(random, name),
      };
      if (random.chance(0.5)) spec.replicas = random.int(1, 3);
      if (random.chance(0.4)) spec.minReadySeconds = random.int(1, 10);
      if (random.chance(0.4)) spec.strategy = deploymentStrategy(random);
      return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: baseMetadata(random, name), spec };
    },
    mutations: [
      ...POD_TEMPLATE_MUTATIONS,
      (random, m) => {
        const spec = m.spec as JsonObject;
        const roll = random.next();
        if (roll < 0.2) spec.replicas = null;
        else if (roll < 0.5) delete spec.replicas;
        else spec.replicas = random.int(1, 4);
      },
      (random, m) => {
        const spec = m.spec as JsonObject;
        const roll = random.next();
        if (roll < 0.2) spec.minReadySeconds = null;
        else if (roll < 0.5) delete spec.minReadySeconds;
        else spec.minReadySeconds = random.int(1, 10);
      },
      (random, m) => {
        const spec = m.spec as JsonObject;
        if (random.chance(0.3)) delete spec.strategy;
        else spec.strategy = deploymentStrategy(random);
      },
    ],
  },
  StatefulSet: {
    create(random, name) {
      const spec: JsonObject = {
        serviceName: name,
        selector: { matchLabels: { app: name } },
        template: podTemplate(random, name),
      };
      if (random.chance(0.5)) spec.replicas = random.int(1, 3);
      if (random.chance(0.3)) spec.minReadySeconds = random.int(1, 10);
      if (random.chance(0.4)) spec.updateStrategy = statefulSetStrategy(random);
      // Immutable after creation; gains defaults on the server, so it is in every patch (K43).
      if (random.chance(0.4)) {
        spec.volumeClaimTemplates = [
          {
            metadata: { name: 'storage' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ];
      }
      return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: baseMetadata(random, name), spec };
    },
    mutations: [
      ...POD_TEMPLATE_MUTATIONS,
      (random, m) => {
        const spec = m.spec as JsonObject;
        if (random.chance(0.4)) delete spec.replicas;
        else spec.replicas = random.int(0, 4);
      },
      (random, m) => {
        const spec = m.spec as JsonObject;
        if (random.chance(0.3)) delete spec.updateStrategy;
        else spec.updateStrategy = statefulSetStrategy(random);
      },
    ],
  },
  Service: {
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
      (random, m) => {
        const spec = m.spec as JsonObject;
        if (random.chance(0.5)) delete spec.publishNotReadyAddresses;
        else spec.publishNotReadyAddresses = random.chance(0.5);
      },
    ],
  },
  ConfigMap: {
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
      (random, m) => {
        if (random.chance(0.5)) delete m.binaryData;
        else m.binaryData = { blob: Buffer.from(`bin-${random.int(0, 9)}`).toString('base64') };
      },
    ],
  },
  Secret: {
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
      (random, m) => {
        if (random.chance(0.5)) delete m.stringData;
        else m.stringData = { plain: `p${random.int(0, 9)}` };
      },
    ],
  },
  PodDisruptionBudget: {
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
      (random, m) => {
        const spec = m.spec as JsonObject;
        if (random.chance(0.5)) delete spec.unhealthyPodEvictionPolicy;
        else spec.unhealthyPodEvictionPolicy = random.pick(['IfHealthyBudget', 'AlwaysAllow']);
      },
    ],
  },
  Widget: {
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
        else spec.size = random.int(1, 9);
      },
    ],
  },
};

function deploymentStrategy(random: SeededRandom): JsonObject {
  // retainKeys: switching to Recreate clears the defaulted rollingUpdate (K19).
  return random.chance(0.5)
    ? { type: 'Recreate' }
    : {
        type: 'RollingUpdate',
        ...(random.chance(0.6) ? { rollingUpdate: { maxSurge: random.int(1, 3) } } : {}),
      };
}

function statefulSetStrategy(random: SeededRandom): JsonObject {
  return random.chance(0.5)
    ? { type: 'OnDelete' }
    : {
        type: 'RollingUpdate',
        ...(random.chance(0.5) ? { rollingUpdate: { partition: random.int(0, 2) } } : {}),
      };
}

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

function widgetSpec(random: SeededRandom): JsonObject {
  const spec: JsonObject = { color: random.pick(VALUES) };
  if (random.chance(0.6)) spec.size = random.int(1, 9);
  if (random.chance(0.6)) {
    spec.items = random
      .sample(['one', 'two', 'three'], random.int(1, 3))
      .map((n) => ({ name: n, weight: random.int(1, 5) }));
  }
  if (random.chance(0.6)) spec.config = randomMap(random, ['x', 'y', 'z']);
  if (random.chance(0.2)) spec.nothing = null;
  return spec;
}

// ---------------------------------------------------------------------------------------------------
// Other writers: plain PATCHes, the same in both namespaces.

function smp(description: string, patch: JsonObject): DiffStep {
  return { type: 'write', description, contentType: 'application/strategic-merge-patch+json', patch };
}

function writerStep(random: SeededRandom, kind: DiffKind, manifest: JsonObject): DiffStep {
  const common: DiffStep[] = [
    smp('a label added', { metadata: { labels: { 'writer.example.com/owner': random.pick(VALUES) } } }),
    smp('an annotation added', {
      metadata: { annotations: { 'writer.example.com/seen': random.pick(VALUES) } },
    }),
    smp('a finalizer added', { metadata: { finalizers: ['writer.example.com/hold'] } }),
  ];
  switch (kind) {
    case 'Deployment':
    case 'StatefulSet':
      return random.pick([...common, ...workloadWriters(random, manifest)]);
    case 'Service':
      return random.pick([
        ...common,
        smp('a port added', { spec: { ports: [{ name: 'writer', port: 9999 }] } }),
      ]);
    case 'ConfigMap':
      return random.pick([...common, smp('a key added', { data: { 'writer-key': random.pick(VALUES) } })]);
    case 'Secret':
      return random.pick([
        ...common,
        smp('a key added', { data: { 'writer-key': Buffer.from('w').toString('base64') } }),
      ]);
    case 'PodDisruptionBudget':
      return random.pick(common);
    case 'Widget': {
      // Custom resources take no strategic merge patch; writers send JSON merge patches.
      const step = random.pick([
        ...common,
        smp('a spec field added', { spec: { writerField: random.pick(VALUES) } }),
      ]);
      return step.type === 'write' ? { ...step, contentType: 'application/merge-patch+json' } : step;
    }
  }
}

/** The same steps on an object of another name: a replay or a trial cannot reuse an object. */
export function renameSequence(sequence: DiffSequence, name: string): DiffSequence {
  const steps = sequence.steps.map((step) =>
    step.type === 'apply'
      ? {
          ...step,
          manifest: { ...step.manifest, metadata: { ...(step.manifest.metadata as JsonObject), name } },
        }
      : step,
  );
  return { ...sequence, name, steps };
}
