import type { PatchSchema, PatchSchemaField } from './schema-patch-meta.js';

/**
 * The schemas the vectors name (docs/merge-semantics.md#14-test-vectors), written as Go types would
 * describe them.
 */

const scalar: PatchSchema = { kind: 'scalar' };
const stringMap: PatchSchema = { kind: 'map', values: scalar };
const scalars = (...names: string[]): Record<string, PatchSchemaField> =>
  Object.fromEntries(names.map((name) => [name, { type: scalar }]));
const list = (items: PatchSchema): PatchSchema => ({ kind: 'list', items });

// Upstream's test type (apimachinery strategicpatch patch_test.go).
const mergeItem: PatchSchema = {
  kind: 'struct',
  name: 'MergeItem',
  fields: {
    ...scalars('name', 'value', 'other'),
    mergingList: { type: () => list(mergeItem), strategy: 'merge', mergeKey: 'name' },
    nonMergingList: { type: () => list(mergeItem) },
    mergingIntList: { type: list(scalar), strategy: 'merge' },
    nonMergingIntList: { type: list(scalar) },
    mergeItemPtr: { type: () => mergeItem, strategy: 'merge', mergeKey: 'name' },
    simpleMap: { type: stringMap },
    replacingItem: { type: { kind: 'struct', name: 'RawExtension', fields: {} }, strategy: 'replace' },
    retainKeysMap: { type: () => retainKeysMergeItem, strategy: 'retainKeys' },
    retainKeysMergingList: { type: () => list(mergeItem), strategy: 'merge,retainKeys', mergeKey: 'name' },
  },
};
const retainKeysMergeItem: PatchSchema = {
  kind: 'struct',
  name: 'RetainKeysMergeItem',
  fields: {
    ...scalars('name', 'value', 'other'),
    simpleMap: { type: stringMap },
    mergingIntList: { type: list(scalar), strategy: 'merge' },
    mergingList: { type: () => list(mergeItem), strategy: 'merge', mergeKey: 'name' },
    nonMergingList: { type: () => list(mergeItem) },
  },
};

const objectMeta: PatchSchema = {
  kind: 'struct',
  name: 'ObjectMeta',
  fields: {
    ...scalars(
      'name',
      'namespace',
      'generation',
      'resourceVersion',
      'uid',
      'generateName',
      'creationTimestamp',
    ),
    labels: { type: stringMap },
    annotations: { type: stringMap },
    finalizers: { type: list(scalar), strategy: 'merge' },
    ownerReferences: { type: list({ kind: 'any' }), strategy: 'merge', mergeKey: 'uid' },
  },
};
const labelSelector: PatchSchema = {
  kind: 'struct',
  name: 'LabelSelector',
  fields: { matchLabels: { type: stringMap }, matchExpressions: { type: list({ kind: 'any' }) } },
};
const envVar: PatchSchema = {
  kind: 'struct',
  name: 'EnvVar',
  fields: {
    ...scalars('name', 'value'),
    valueFrom: {
      type: {
        kind: 'struct',
        name: 'EnvVarSource',
        fields: {
          secretKeyRef: {
            type: { kind: 'struct', name: 'SecretKeySelector', fields: scalars('name', 'key') },
          },
        },
      },
    },
  },
};
const container: PatchSchema = {
  kind: 'struct',
  name: 'Container',
  fields: {
    ...scalars('name', 'image', 'imagePullPolicy', 'terminationMessagePath'),
    args: { type: list(scalar) },
    command: { type: list(scalar) },
    env: { type: list(envVar), strategy: 'merge', mergeKey: 'name' },
    envFrom: { type: list({ kind: 'any' }) },
    ports: {
      type: list({
        kind: 'struct',
        name: 'ContainerPort',
        fields: scalars('containerPort', 'hostPort', 'protocol', 'name'),
      }),
      strategy: 'merge',
      mergeKey: 'containerPort',
    },
    volumeMounts: {
      type: list({ kind: 'struct', name: 'VolumeMount', fields: scalars('name', 'mountPath', 'readOnly') }),
      strategy: 'merge',
      mergeKey: 'mountPath',
    },
    resources: {
      type: {
        kind: 'struct',
        name: 'ResourceRequirements',
        fields: { limits: { type: stringMap }, requests: { type: stringMap } },
      },
    },
  },
};
const volume: PatchSchema = {
  kind: 'struct',
  name: 'Volume',
  fields: {
    name: { type: scalar },
    emptyDir: {
      type: { kind: 'struct', name: 'EmptyDirVolumeSource', fields: scalars('medium', 'sizeLimit') },
    },
    configMap: { type: { kind: 'struct', name: 'ConfigMapVolumeSource', fields: scalars('name') } },
  },
};
const podSpec: PatchSchema = {
  kind: 'struct',
  name: 'PodSpec',
  fields: {
    ...scalars('dnsPolicy', 'restartPolicy'),
    containers: { type: list(container), strategy: 'merge', mergeKey: 'name' },
    initContainers: { type: list(container), strategy: 'merge', mergeKey: 'name' },
    volumes: { type: list(volume), strategy: 'merge,retainKeys', mergeKey: 'name' },
    tolerations: { type: list({ kind: 'any' }) },
    nodeSelector: { type: stringMap },
  },
};
const podTemplateSpec: PatchSchema = {
  kind: 'struct',
  name: 'PodTemplateSpec',
  fields: { metadata: { type: objectMeta }, spec: { type: podSpec } },
};
const typeMeta = scalars('apiVersion', 'kind');
const deployment: PatchSchema = {
  kind: 'struct',
  name: 'Deployment',
  fields: {
    ...typeMeta,
    metadata: { type: objectMeta },
    spec: {
      type: {
        kind: 'struct',
        name: 'DeploymentSpec',
        fields: {
          ...scalars('replicas', 'minReadySeconds'),
          selector: { type: labelSelector },
          strategy: {
            type: {
              kind: 'struct',
              name: 'DeploymentStrategy',
              fields: {
                type: { type: scalar },
                rollingUpdate: {
                  type: {
                    kind: 'struct',
                    name: 'RollingUpdateDeployment',
                    fields: scalars('maxSurge', 'maxUnavailable'),
                  },
                },
              },
            },
            strategy: 'retainKeys',
          },
          template: { type: podTemplateSpec },
        },
      },
    },
    status: { type: { kind: 'map', values: { kind: 'any' } } },
  },
};
const service: PatchSchema = {
  kind: 'struct',
  name: 'Service',
  fields: {
    ...typeMeta,
    metadata: { type: objectMeta },
    spec: {
      type: {
        kind: 'struct',
        name: 'ServiceSpec',
        fields: {
          ports: {
            type: list({
              kind: 'struct',
              name: 'ServicePort',
              fields: scalars('name', 'port', 'protocol', 'targetPort'),
            }),
            strategy: 'merge',
            mergeKey: 'port',
          },
          selector: { type: stringMap },
        },
      },
    },
  },
};
const configMap: PatchSchema = {
  kind: 'struct',
  name: 'ConfigMap',
  fields: {
    ...typeMeta,
    metadata: { type: objectMeta },
    data: { type: stringMap },
    binaryData: { type: stringMap },
  },
};
const pvc: PatchSchema = { kind: 'any' };
const statefulSet: PatchSchema = {
  kind: 'struct',
  name: 'StatefulSet',
  fields: {
    ...typeMeta,
    metadata: { type: objectMeta },
    spec: {
      type: {
        kind: 'struct',
        name: 'StatefulSetSpec',
        fields: {
          replicas: { type: scalar },
          volumeClaimTemplates: { type: list(pvc) },
          template: { type: podTemplateSpec },
        },
      },
    },
  },
};
const pdb: PatchSchema = {
  kind: 'struct',
  name: 'PodDisruptionBudget',
  fields: {
    ...typeMeta,
    metadata: { type: objectMeta },
    spec: {
      type: {
        kind: 'struct',
        name: 'PodDisruptionBudgetSpec',
        fields: {
          ...scalars('minAvailable', 'maxUnavailable'),
          selector: { type: labelSelector, strategy: 'replace' },
        },
      },
    },
  },
};

const vectorSchemas: Readonly<Record<string, PatchSchema>> = {
  MergeItem: mergeItem,
  Deployment: deployment,
  PodSpec: podSpec,
  Container: container,
  Service: service,
  ConfigMap: configMap,
  StatefulSet: statefulSet,
  PDB: pdb,
};

/** `schema:` values in the fixtures carry notes after the name ("MergeItem (fields ... UNKNOWN)"). */
export function vectorSchema(label: string): PatchSchema {
  const name = label.split(' ')[0] ?? label;
  const schema = vectorSchemas[name];
  if (schema === undefined) throw new Error(`no schema named ${name}`);
  return schema;
}
