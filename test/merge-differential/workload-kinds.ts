import type { JsonObject } from '../../src/manifests/json-value.js';
import { smp, type DiffStep } from './diff-step.js';
import { baseMetadata, removeOrSet, setRemoveOrNull, type KindModel } from './kind-model.js';
import {
  podTemplate,
  podTemplateMutations,
  podTemplateWriters,
  SPEC_TEMPLATE,
  type TemplatePlace,
} from './pod-template.js';
import type { SeededRandom } from './seeded-random.js';

// Kinds with a pod template.

const SCHEDULES = ['*/5 * * * *', '0 * * * *', '@hourly', '30 2 * * 1-5'] as const;

const JOB_TEMPLATE: TemplatePlace = {
  locate: (m) =>
    (((m.spec as JsonObject).jobTemplate as JsonObject).spec as JsonObject).template as JsonObject,
  pointer: '/spec/jobTemplate/spec/template',
  wrap: (patch) => ({ spec: { jobTemplate: { spec: { template: patch } } } }),
};

function workloadWriters(random: SeededRandom, manifest: JsonObject): DiffStep[] {
  return [
    smp('kubectl scale', { spec: { replicas: random.int(0, 5) } }),
    ...podTemplateWriters(random, manifest, SPEC_TEMPLATE),
  ];
}

export const WORKLOAD_KINDS = {
  Deployment: {
    resource: { plural: 'deployments' },
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
      ...podTemplateMutations(SPEC_TEMPLATE),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'replicas', () => random.int(1, 4), 0.2, 0.3),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'minReadySeconds', () => random.int(1, 10), 0.2, 0.3),
      (random, m) =>
        removeOrSet(random, m.spec as JsonObject, 'strategy', 0.3, () => deploymentStrategy(random)),
    ],
    writers: workloadWriters,
  },
  StatefulSet: {
    resource: { plural: 'statefulsets' },
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
      ...podTemplateMutations(SPEC_TEMPLATE),
      (random, m) => removeOrSet(random, m.spec as JsonObject, 'replicas', 0.4, () => random.int(0, 4)),
      (random, m) =>
        removeOrSet(random, m.spec as JsonObject, 'updateStrategy', 0.3, () => statefulSetStrategy(random)),
    ],
    writers: workloadWriters,
  },
  CronJob: {
    resource: { plural: 'cronjobs' },
    create(random, name) {
      const template = podTemplate(random, name);
      (template.spec as JsonObject).restartPolicy = 'OnFailure';
      const spec: JsonObject = { schedule: random.pick(SCHEDULES), jobTemplate: { spec: { template } } };
      if (random.chance(0.3)) spec.concurrencyPolicy = random.pick(['Allow', 'Forbid', 'Replace']);
      if (random.chance(0.3)) spec.successfulJobsHistoryLimit = random.int(0, 5);
      if (random.chance(0.2)) spec.timeZone = 'Etc/UTC';
      return { apiVersion: 'batch/v1', kind: 'CronJob', metadata: baseMetadata(random, name), spec };
    },
    mutations: [
      ...podTemplateMutations(JOB_TEMPLATE),
      (random, m) => {
        (m.spec as JsonObject).schedule = random.pick(SCHEDULES);
      },
      (random, m) => setRemoveOrNull(random, m.spec as JsonObject, 'suspend', () => random.chance(0.5)),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'concurrencyPolicy', () =>
          random.pick(['Allow', 'Forbid', 'Replace']),
        ),
      (random, m) =>
        setRemoveOrNull(random, m.spec as JsonObject, 'failedJobsHistoryLimit', () => random.int(0, 3)),
      (random, m) => {
        // Defaulted to 6 inside the job spec: a removal leaves the default, not the old value.
        const jobSpec = ((m.spec as JsonObject).jobTemplate as JsonObject).spec as JsonObject;
        setRemoveOrNull(random, jobSpec, 'backoffLimit', () => random.int(0, 4), 0.1);
      },
    ],
    writers: (random, manifest) => [
      smp('kubectl patch: suspend', { spec: { suspend: true } }),
      ...podTemplateWriters(random, manifest, JOB_TEMPLATE),
    ],
  },
} satisfies Record<string, KindModel>;

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
