import { computeObjectHealth } from '../../src/health/compute-object-health.js';
import type { JsonObject } from '../../src/manifests/json-value.js';

// kstatus's rules as a table: each row is a live object (status written as the real controllers
// write it) and the health a user should see.

const deployment = (status: JsonObject, replicas = 3, generation = 2): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', generation },
  spec: { replicas },
  status,
});
const rolledOut = {
  observedGeneration: 2,
  replicas: 3,
  updatedReplicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  conditions: [{ type: 'Available', status: 'True' }],
};
const withConditions = (
  kind: string,
  apiVersion: string,
  conditions: JsonObject[],
  extra: JsonObject = {},
) => ({
  apiVersion,
  kind,
  metadata: { name: 'x', generation: 1 },
  status: { observedGeneration: 1, conditions, ...extra },
});

describe('computeObjectHealth', () => {
  it.each<[string, JsonObject | undefined, string, RegExp]>([
    ['a missing object', undefined, 'NotFound', /does not exist/],
    [
      'an object without status',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
      'Current',
      /current/,
    ],
    [
      'an object being deleted',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { deletionTimestamp: 'x' } },
      'Terminating',
      /deleted/,
    ],
    ['a rolled-out Deployment', deployment(rolledOut), 'Current', /3 of 3 replicas available/],
    [
      'a Deployment whose status is behind its spec',
      deployment({ ...rolledOut, observedGeneration: 1 }),
      'InProgress',
      /generation 2 is not observed/,
    ],
    ['a Deployment with no status yet', deployment({}), 'InProgress', /no status yet/],
    [
      'a Deployment rolling out',
      deployment({ ...rolledOut, updatedReplicas: 1 }),
      'InProgress',
      /1 of 3 replicas updated/,
    ],
    [
      'a Deployment with old pods',
      deployment({ ...rolledOut, replicas: 4 }),
      'InProgress',
      /pending termination/,
    ],
    [
      'a Deployment short of available pods',
      deployment({ ...rolledOut, availableReplicas: 1 }),
      'InProgress',
      /1 of 3 replicas available/,
    ],
    [
      'a Deployment past its progress deadline',
      deployment({
        ...rolledOut,
        updatedReplicas: 1,
        conditions: [
          {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: 'ReplicaSet "web-1" has timed out progressing.',
          },
        ],
      }),
      'Failed',
      /progress deadline exceeded/,
    ],
    [
      'a StatefulSet mid-update',
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { generation: 1 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 1,
          replicas: 2,
          readyReplicas: 2,
          updatedReplicas: 1,
          currentRevision: 'a',
          updateRevision: 'b',
        },
      },
      'InProgress',
      /1 of 2 replicas at the update revision/,
    ],
    [
      'a ready StatefulSet',
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { generation: 1 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 1,
          replicas: 2,
          readyReplicas: 2,
          updatedReplicas: 2,
          currentRevision: 'b',
          updateRevision: 'b',
        },
      },
      'Current',
      /2 of 2 replicas ready/,
    ],
    [
      'a DaemonSet not on every node',
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          currentNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 2,
          numberReady: 2,
        },
      },
      'InProgress',
      /2 of 3 pods available/,
    ],
    [
      'a completed Job',
      withConditions('Job', 'batch/v1', [{ type: 'Complete', status: 'True' }]),
      'Current',
      /completed/,
    ],
    [
      'a failed Job',
      withConditions('Job', 'batch/v1', [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }]),
      'Failed',
      /BackoffLimitExceeded/,
    ],
    ['a running Job', withConditions('Job', 'batch/v1', [], { active: 1 }), 'InProgress', /1 active/],
    [
      'a ready Pod',
      withConditions('Pod', 'v1', [{ type: 'Ready', status: 'True' }], { phase: 'Running' }),
      'Current',
      /Ready/,
    ],
    ['a pending Pod', withConditions('Pod', 'v1', [], { phase: 'Pending' }), 'InProgress', /Pending/],
    [
      'a bound claim',
      withConditions('PersistentVolumeClaim', 'v1', [], { phase: 'Bound' }),
      'Current',
      /current/,
    ],
    [
      'an unbound claim',
      withConditions('PersistentVolumeClaim', 'v1', [], { phase: 'Pending' }),
      'InProgress',
      /not Bound/,
    ],
    [
      'a LoadBalancer without an address',
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {},
        spec: { type: 'LoadBalancer' },
        status: { loadBalancer: {} },
      },
      'InProgress',
      /load balancer/,
    ],
    [
      'a ClusterIP Service',
      { apiVersion: 'v1', kind: 'Service', metadata: {}, spec: { type: 'ClusterIP' } },
      'Current',
      /current/,
    ],
    [
      'an Established CRD',
      withConditions('CustomResourceDefinition', 'apiextensions.k8s.io/v1', [
        { type: 'Established', status: 'True' },
      ]),
      'Current',
      /Established/,
    ],
    [
      'a CRD whose names clash',
      withConditions('CustomResourceDefinition', 'apiextensions.k8s.io/v1', [
        { type: 'NamesAccepted', status: 'False', message: 'plural taken' },
      ]),
      'Failed',
      /plural taken/,
    ],
    [
      'a terminating Namespace',
      { apiVersion: 'v1', kind: 'Namespace', metadata: {}, status: { phase: 'Terminating' } },
      'Terminating',
      /terminating/,
    ],
    [
      'a custom resource that is Ready',
      withConditions('Database', 'db.example.com/v1', [{ type: 'Ready', status: 'True' }]),
      'Current',
      /current/,
    ],
    [
      'a custom resource not Ready yet',
      withConditions('Database', 'db.example.com/v1', [
        { type: 'Ready', status: 'False', message: 'provisioning' },
      ]),
      'InProgress',
      /provisioning/,
    ],
    [
      'a custom resource that is Stalled',
      withConditions('Database', 'db.example.com/v1', [
        { type: 'Stalled', status: 'True', message: 'quota exceeded' },
      ]),
      'Failed',
      /quota exceeded/,
    ],
    [
      'a custom resource Reconciling',
      withConditions('Database', 'db.example.com/v1', [
        { type: 'Reconciling', status: 'True', message: 'resizing' },
      ]),
      'InProgress',
      /resizing/,
    ],
  ])('%s', (_what, object, status, message) => {
    const health = computeObjectHealth(object);
    expect(health.status).toBe(status);
    expect(health.message).toMatch(message);
  });
});
