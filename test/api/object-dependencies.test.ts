import {
  crossNamespaceObjectOutcome,
  objectDependencyOutcome,
  type ObjectDependencyRead,
  type PlacedObjectDependency,
} from '../../src/api/object-dependencies.js';

const postgres: PlacedObjectDependency = {
  dependency: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'postgres', namespace: 'db' },
  group: 'apps',
  resource: 'deployments',
  namespace: 'db',
};
const settings: PlacedObjectDependency = {
  dependency: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
  group: '',
  resource: 'configmaps',
  namespace: 'team',
};
const viewRole: PlacedObjectDependency = {
  dependency: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    name: 'view',
    namespace: 'db',
  },
  group: 'rbac.authorization.k8s.io',
  resource: 'clusterroles',
  namespace: '',
};

const deployment = (available: number) => ({
  kind: 'found' as const,
  object: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'postgres', namespace: 'db', generation: 1 },
    spec: { replicas: 1 },
    status: {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: available,
      availableReplicas: available,
      conditions: [{ type: 'Available', status: available === 1 ? 'True' : 'False' }],
    },
  },
});
const configMap = {
  kind: 'found' as const,
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } },
};

const decide = (reads: [PlacedObjectDependency, ObjectDependencyRead][], user?: string) =>
  objectDependencyOutcome({
    reads: reads.map(([placed, read]) => ({ placed, read })),
    user,
    retryIntervalMs: 30_000,
  });

describe('objectDependencyOutcome', () => {
  it('waits for a ready expression instead of kstatus, saying the expression and what it gave', () => {
    const withReady = (ready: string): PlacedObjectDependency => ({
      ...postgres,
      dependency: { ...postgres.dependency, ready },
    });
    // Current by kstatus, but not what the expression asks.
    expect(decide([[withReady('status.readyReplicas >= 2'), deployment(1)]])).toEqual({
      kind: 'waiting',
      reason: 'DependencyNotReady',
      message:
        'waiting for dependencies: Deployment db/postgres is InProgress: ready expression is false: status.readyReplicas >= 2',
      afterMs: 30_000,
    });
    // Not Current by kstatus, but what the expression asks.
    expect(decide([[withReady('status.replicas == 1'), deployment(0)]])).toBeUndefined();
    expect(decide([[withReady('status.phase == "Up"'), deployment(1)]])).toEqual({
      kind: 'waiting',
      reason: 'DependencyNotReady',
      message:
        'waiting for dependencies: Deployment db/postgres is Unknown: ready expression status.phase == "Up" failed: field not found: phase',
      afterMs: 30_000,
    });
    expect(decide([[withReady('true'), { kind: 'missing' }]])).toMatchObject({
      message: 'waiting for dependencies: Deployment db/postgres is NotFound: the object does not exist',
    });
  });

  it('goes on when every object is Current', () => {
    expect(
      decide([
        [postgres, deployment(1)],
        [settings, configMap],
      ]),
    ).toBeUndefined();
    expect(decide([])).toBeUndefined();
  });

  it('waits, after spec.retryInterval, naming each awaited object with its kstatus status', () => {
    const outcome = decide([
      [postgres, deployment(0)],
      [settings, { kind: 'missing' }],
      [
        viewRole,
        { kind: 'found', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' } },
      ],
    ]);
    expect(outcome).toMatchObject({ kind: 'waiting', reason: 'DependencyNotReady', afterMs: 30_000 });
    const message = outcome?.kind === 'waiting' ? outcome.message : '';
    expect(message).toMatch(
      /^waiting for dependencies: Deployment db\/postgres is InProgress: .+; ConfigMap team\/settings is NotFound: /,
    );
    expect(message).not.toContain('ClusterRole');
  });

  it('waits for a kind discovery does not know, and backs off when an object could not be read', () => {
    const unknown = decide([[settings, { kind: 'unknownKind', message: 'no kind "Widget"' }]]);
    expect(unknown).toMatchObject({ kind: 'waiting', reason: 'DependencyNotReady' });
    const unreadable = decide([
      [settings, { kind: 'unreadable', message: 'GET ...: 503' }],
      [postgres, deployment(0)],
    ]);
    expect(unreadable).toMatchObject({ kind: 'retryable', reason: 'DependencyNotReady' });
    expect(unreadable?.kind !== 'applied' && unreadable?.message).toContain(
      'ConfigMap team/settings could not be read: GET ...: 503',
    );
  });

  it('stalls when the account may not read an object, naming it and the RBAC to grant', () => {
    const outcome = decide(
      [
        [postgres, { kind: 'forbidden' }],
        [settings, { kind: 'missing' }],
        [viewRole, { kind: 'forbidden' }],
      ],
      'system:serviceaccount:team:deployer',
    );
    expect(outcome).toMatchObject({ kind: 'stalled', reason: 'DependencyNotReadable' });
    expect(outcome?.kind !== 'applied' && outcome?.message).toBe(
      "the ApplySet's ServiceAccount team/deployer may not read what spec.dependsOn names; " +
        'Deployment db/postgres: grant it get on deployments.apps (a Role in namespace db with resourceNames: [postgres]); ' +
        'ClusterRole view: grant it get on clusterroles.rbac.authorization.k8s.io (a ClusterRole and ClusterRoleBinding with resourceNames: [view]); ' +
        'nothing was fetched or applied',
    );
  });
});

describe('crossNamespaceObjectOutcome', () => {
  it('refuses an object of another namespace under --no-cross-namespace-refs, not a cluster-scoped one', () => {
    expect(crossNamespaceObjectOutcome([postgres, settings, viewRole], 'team', true)).toEqual({
      kind: 'stalled',
      reason: 'CrossNamespaceRefRefused',
      message:
        'spec.dependsOn names Deployment db/postgres of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied',
    });
    expect(crossNamespaceObjectOutcome([settings, viewRole], 'team', true)).toBeUndefined();
    expect(crossNamespaceObjectOutcome([postgres], 'team', false)).toBeUndefined();
  });
});
