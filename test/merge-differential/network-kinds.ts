import type { JsonObject } from '../../src/manifests/json-value.js';
import { jsonRemove, smp } from './diff-step.js';
import { baseMetadata, randomMap, setRemoveOrNull, VALUES, type KindModel } from './kind-model.js';
import type { SeededRandom } from './seeded-random.js';

// Ingress, NetworkPolicy and HorizontalPodAutoscaler v2: lists without merge keys (replaced whole),
// and fields the server defaults (HPA minReplicas, metrics and behavior).

const HOSTS = ['a.example.com', 'b.example.com', 'c.example.com'] as const;

export const NETWORK_KINDS = {
  Ingress: {
    resource: { plural: 'ingresses' },
    create(random, name) {
      const spec: JsonObject = { rules: ingressRules(random) };
      if (random.chance(0.4)) spec.ingressClassName = random.pick(['nginx', 'internal']);
      if (random.chance(0.3)) spec.tls = [{ hosts: random.sample(HOSTS, 1), secretName: 'tls' }];
      return {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: baseMetadata(random, name),
        spec,
      };
    },
    mutations: [
      (random, m) => {
        const spec = m.spec as JsonObject;
        const rules = Array.isArray(spec.rules) ? spec.rules : [];
        spec.rules = random.chance(0.3) && rules.length > 1 ? random.shuffle(rules) : ingressRules(random);
      },
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'tls', () => [
          { hosts: random.sample(HOSTS, random.int(1, 2)), secretName: `tls-${random.pick(VALUES)}` },
        ]),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'ingressClassName', () =>
          random.pick(['nginx', 'internal']),
        ),
      (random, m) => setRemoveOrNull(random, m.spec as JsonObject, 'defaultBackend', () => backend(random)),
    ],
    writers: () => [smp('a rule added', { spec: { rules: [{ host: 'writer.example.com' }] } })],
  },
  NetworkPolicy: {
    resource: { plural: 'networkpolicies' },
    create(random, name) {
      const spec: JsonObject = { podSelector: random.chance(0.3) ? {} : { matchLabels: { app: name } } };
      if (random.chance(0.6)) spec.ingress = [policyRule(random, 'from')];
      if (random.chance(0.4)) spec.egress = [policyRule(random, 'to')];
      if (random.chance(0.5)) spec.policyTypes = random.sample(['Ingress', 'Egress'], random.int(1, 2));
      return {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: baseMetadata(random, name),
        spec,
      };
    },
    mutations: [
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'ingress', () =>
          Array.from({ length: random.int(0, 2) }, () => policyRule(random, 'from')),
        ),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'egress', () => [policyRule(random, 'to')]),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'policyTypes', () =>
          random.sample(['Ingress', 'Egress'], random.int(1, 2)),
        ),
      (random, m) => {
        (m.spec as JsonObject).podSelector = { matchLabels: randomMap(random, ['app', 'tier']) };
      },
    ],
    writers: () => [jsonRemove('kubectl patch --type json: remove the ingress rules', '/spec/ingress')],
  },
  HorizontalPodAutoscaler: {
    resource: { plural: 'horizontalpodautoscalers' },
    create(random, name) {
      const spec: JsonObject = {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
        maxReplicas: random.int(4, 10),
      };
      if (random.chance(0.6)) spec.minReplicas = random.int(1, 3);
      if (random.chance(0.6)) spec.metrics = metrics(random);
      if (random.chance(0.4)) spec.behavior = behavior(random);
      return {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: baseMetadata(random, name),
        spec,
      };
    },
    mutations: [
      (random, m) => setRemoveOrNull(random, m.spec as JsonObject, 'minReplicas', () => random.int(1, 3)),
      (random, m) => {
        (m.spec as JsonObject).maxReplicas = random.int(4, 10);
      },
      (random, m) => setRemoveOrNull(random, m.spec as JsonObject, 'metrics', () => metrics(random)),
      (random, m) => setRemoveOrNull(random, m.spec as JsonObject, 'behavior', () => behavior(random)),
    ],
    writers: (random) => [
      smp('kubectl patch: maxReplicas', { spec: { maxReplicas: random.int(4, 12) } }),
      smp('kubectl patch: a memory metric', {
        spec: { metrics: [{ type: 'Resource', resource: { name: 'memory', target: averageValue() } }] },
      }),
    ],
  },
} satisfies Record<string, KindModel>;

function backend(random: SeededRandom): JsonObject {
  const port: JsonObject = random.chance(0.5) ? { number: random.pick([80, 8080]) } : { name: 'http' };
  return { service: { name: `svc-${random.pick(VALUES)}`, port } };
}

function ingressRules(random: SeededRandom): JsonObject[] {
  return random.sample(HOSTS, random.int(1, 2)).map((host) => ({
    host,
    http: {
      paths: random.sample(['/', '/api', '/static'], random.int(1, 2)).map((path) => ({
        path,
        pathType: random.pick(['Prefix', 'Exact', 'ImplementationSpecific']),
        backend: backend(random),
      })),
    },
  }));
}

function policyRule(random: SeededRandom, direction: 'from' | 'to'): JsonObject {
  const peers: JsonObject[] = [];
  if (random.chance(0.5)) peers.push({ podSelector: { matchLabels: { role: random.pick(VALUES) } } });
  if (random.chance(0.3)) peers.push({ namespaceSelector: { matchLabels: { team: random.pick(VALUES) } } });
  if (direction === 'to' && random.chance(0.4)) {
    peers.push({
      ipBlock: { cidr: '10.0.0.0/8', ...(random.chance(0.5) ? { except: ['10.1.0.0/16'] } : {}) },
    });
  }
  const rule: JsonObject = {};
  if (peers.length > 0) rule[direction] = peers;
  if (random.chance(0.6)) {
    rule.ports = random.sample([80, 443, 'http'], random.int(1, 2)).map((port) => ({
      port,
      ...(random.chance(0.5) ? { protocol: 'TCP' } : {}),
    }));
  }
  return rule;
}

function averageValue(): JsonObject {
  return { type: 'AverageValue', averageValue: '500Mi' };
}

function metrics(random: SeededRandom): JsonObject[] {
  const cpu = {
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: random.int(50, 90) } },
  };
  const memory = { type: 'Resource', resource: { name: 'memory', target: averageValue() } };
  return random.sample([cpu, memory], random.int(1, 2));
}

function behavior(random: SeededRandom): JsonObject {
  const rules = (): JsonObject => {
    const rule: JsonObject = {
      policies: [{ type: random.pick(['Pods', 'Percent']), value: random.int(1, 4), periodSeconds: 60 }],
    };
    if (random.chance(0.5)) rule.stabilizationWindowSeconds = random.int(0, 300);
    if (random.chance(0.3)) rule.selectPolicy = random.pick(['Max', 'Min']);
    return rule;
  };
  const out: JsonObject = {};
  if (random.chance(0.7)) out.scaleDown = rules();
  if (random.chance(0.5)) out.scaleUp = rules();
  return out;
}
