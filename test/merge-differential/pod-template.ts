import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { jsonRemove, smp, type DiffStep } from './diff-step.js';
import { randomMap, VALUES, type Mutation } from './kind-model.js';
import type { SeededRandom } from './seeded-random.js';

// Pod templates, for Deployment, StatefulSet and CronJob.

const CONTAINER_NAMES = ['app', 'proxy', 'logger', 'helper'] as const;
const IMAGES = ['nginx:1.25', 'nginx:1.27', 'busybox:1.36'] as const;
const ENV_NAMES = ['A', 'B', 'C', 'D', 'E'] as const;
const CONTAINER_PORTS = [80, 443, 8080, 9090] as const;
const VOLUME_NAMES = ['data', 'config', 'cache'] as const;
const TOLERATION_KEYS = ['dedicated', 'gpu', 'spot'] as const;

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

export function podTemplate(random: SeededRandom, app: string): JsonObject {
  const labels: JsonObject = { app, ...(random.chance(0.4) ? { track: random.pick(VALUES) } : {}) };
  return { metadata: { labels }, spec: podSpec(random) };
}

/** Where a kind keeps its pod template: `spec.template`, or a CronJob's `spec.jobTemplate.spec.template`. */
export interface TemplatePlace {
  locate(manifest: JsonObject): JsonObject;
  /** The same place as a JSON pointer. */
  readonly pointer: string;
  /** A patch of the template, placed in a patch of the whole object. */
  wrap(templatePatch: JsonObject): JsonObject;
}

export const SPEC_TEMPLATE: TemplatePlace = {
  locate: (m) => (m.spec as JsonObject).template as JsonObject,
  pointer: '/spec/template',
  wrap: (patch) => ({ spec: { template: patch } }),
};

function containersIn(spec: JsonObject): JsonObject[] {
  return Array.isArray(spec.containers) ? spec.containers.filter(isJsonObject) : [];
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

/** Changes to a pod template wherever `locate` finds it. */
export function podTemplateMutations({ locate }: TemplatePlace): Mutation[] {
  const templateSpec = (m: JsonObject) => locate(m).spec as JsonObject;
  const containersOf = (m: JsonObject) => containersIn(templateSpec(m));
  return [
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
      const metadata = locate(m).metadata as JsonObject;
      const labels = metadata.labels as JsonObject;
      metadata.labels = { app: labels.app ?? null, ...randomMap(random, ['track', 'team'], 0) };
    },
  ];
}

/** Other writers of a pod template: a controller's sidecar, `kubectl rollout restart`, `set env`, ... */
export function podTemplateWriters(
  random: SeededRandom,
  manifest: JsonObject,
  { locate, pointer, wrap }: TemplatePlace,
): DiffStep[] {
  const containers = containersIn(locate(manifest).spec as JsonObject);
  const restartedAt = `2024-01-0${random.int(1, 9)}T00:00:00Z`;
  const steps: DiffStep[] = [
    smp(
      'a sidecar added by another controller',
      wrap({ spec: { containers: [{ name: 'injected', image: 'busybox:1.36' }] } }),
    ),
    smp(
      'kubectl rollout restart',
      wrap({ metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': restartedAt } } }),
    ),
  ];
  const first = containers[0];
  if (first === undefined) return steps;
  const name = first.name ?? null;
  const container = (fields: JsonObject) => wrap({ spec: { containers: [{ name, ...fields }] } });
  steps.push(
    smp('kubectl set env', container({ env: [{ name: 'INJECTED', value: random.pick(VALUES) }] })),
    smp('kubectl set image', container({ image: random.pick(IMAGES) })),
    smp('a container deleted ($patch: delete)', container({ $patch: 'delete' })),
    smp(
      'an env var deleted ($patch: delete)',
      container({ env: [{ name: random.pick(ENV_NAMES), $patch: 'delete' }] }),
    ),
  );
  if (Array.isArray(first.args)) {
    steps.push(
      jsonRemove('kubectl patch --type json: remove the first args', `${pointer}/spec/containers/0/args`),
    );
  }
  return steps;
}
