import type { ApplySet, ApplySetCondition } from '../../src/api/applyset-types.js';
import {
  dependencyKeysOf,
  dependencyOutcome,
  notReadyDependencies,
  readinessProblem,
  type DependencyCheckInput,
  type DependencyRead,
} from '../../src/api/dependencies.js';
import { createDependentsIndex } from '../../src/controller/runtime/dependents-index.js';
import type { JsonObject } from '../../src/manifests/json-value.js';

const ready = (status: ApplySetCondition['status'], reason: string, observedGeneration?: number) => ({
  type: 'Ready' as const,
  status,
  reason,
  message: '',
  lastTransitionTime: '2024-05-01T10:00:00Z',
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
});

function applySet(
  key: string,
  options: {
    dependsOn?: { name: string; namespace?: string; apiVersion?: string; kind?: string }[];
    generation?: number;
    conditions?: ApplySetCondition[];
    observedGeneration?: number;
    suspend?: boolean;
  } = {},
): ApplySet {
  const [namespace = '', name = ''] = key.split('/');
  return {
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: { namespace, name, generation: options.generation ?? 1 },
    spec: {
      source: { url: 'https://h/r', ref: { branch: 'main' } },
      prune: true,
      ...(options.dependsOn === undefined ? {} : { dependsOn: options.dependsOn }),
      ...(options.suspend === undefined ? {} : { suspend: options.suspend }),
    },
    status: {
      ...(options.conditions === undefined ? {} : { conditions: options.conditions }),
      ...(options.observedGeneration === undefined ? {} : { observedGeneration: options.observedGeneration }),
    },
  };
}

const found = (set: ApplySet): DependencyRead => ({ kind: 'found', applySet: set });

describe('readinessProblem', () => {
  it('is undefined for Ready True at the current generation, by the condition or by the status', () => {
    expect(
      readinessProblem(applySet('t/db', { generation: 3, conditions: [ready('True', 'X', 3)] })),
    ).toBeUndefined();
    expect(
      readinessProblem(
        applySet('t/db', { generation: 3, conditions: [ready('True', 'X')], observedGeneration: 3 }),
      ),
    ).toBeUndefined();
  });

  it('names what is missing', () => {
    expect(readinessProblem(undefined)).toBe('not found');
    expect(readinessProblem(applySet('t/db', { generation: 3, conditions: [ready('True', 'X', 2)] }))).toBe(
      'generation 3 not yet observed',
    );
    expect(readinessProblem(applySet('t/db', { generation: 3 }))).toBe('generation 3 not yet observed');
    expect(
      readinessProblem(
        applySet('t/db', { generation: 3, conditions: [ready('False', 'HealthCheckFailed', 3)] }),
      ),
    ).toBe('Ready=False (HealthCheckFailed)');
    expect(
      readinessProblem(applySet('t/db', { generation: 3, conditions: [ready('Unknown', 'Progressing', 3)] })),
    ).toBe('Ready=Unknown (Progressing)');
    expect(readinessProblem(applySet('t/db', { generation: 3, observedGeneration: 3 }))).toBe(
      'no Ready condition yet',
    );
    const deleting = applySet('t/db', { conditions: [ready('True', 'X', 1)] });
    expect(
      readinessProblem({
        ...deleting,
        metadata: { ...deleting.metadata, deletionTimestamp: '2024-05-01T10:00:00Z' },
      }),
    ).toBe('being deleted');
  });

  it('counts a suspended ApplySet Ready at its generation, and says suspended when it is not', () => {
    expect(
      readinessProblem(
        applySet('t/db', { suspend: true, generation: 2, conditions: [ready('True', 'X', 2)] }),
      ),
    ).toBeUndefined();
    expect(
      readinessProblem(
        applySet('t/db', { suspend: true, generation: 3, conditions: [ready('True', 'X', 2)] }),
      ),
    ).toBe('suspended, generation 3 not yet observed');
  });
});

/** Who waits for `key`, as the controller's index of dependents finds them among `applySets`. */
function dependentsOf(key: string, applySets: readonly ApplySet[]): string[] {
  const index = createDependentsIndex();
  for (const object of applySets)
    index.dependentsToWake({ type: 'added', object: object as unknown as JsonObject });
  const [namespace, name] = key.split('/');
  return index.dependentsToWake({ type: 'deleted', object: { metadata: { namespace, name } } as JsonObject });
}

describe('dependencyKeysOf and the dependents index', () => {
  const app = applySet('t/app', { dependsOn: [{ name: 'db' }, { name: 'queue', namespace: 'infra' }] });
  const other = applySet('t/other', { dependsOn: [{ name: 'queue' }] });

  it('reads the namespace of each dependency, the ApplySet`s own by default', () => {
    expect(dependencyKeysOf(app)).toEqual(['t/db', 'infra/queue']);
    expect(dependencyKeysOf(applySet('t/x'))).toEqual([]);
  });

  it('ignores the entries naming other objects, but reads an ApplySet named by its kind', () => {
    const mixed = applySet('t/mixed', {
      dependsOn: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
        { apiVersion: 'applyset.dev/v1alpha1', kind: 'ApplySet', name: 'db' },
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'postgres', namespace: 'data' },
      ],
    });
    expect(dependencyKeysOf(mixed)).toEqual(['t/db']);
    expect(dependentsOf('t/settings', [mixed])).toEqual([]);
  });

  it('finds the ApplySets that name a key', () => {
    expect(dependentsOf('t/db', [app, other])).toEqual(['t/app']);
    expect(dependentsOf('infra/queue', [app, other])).toEqual(['t/app']);
    expect(dependentsOf('t/queue', [app, other])).toEqual(['t/other']);
    expect(dependentsOf('t/nothing', [app, other])).toEqual([]);
  });
});

describe('dependencyOutcome', () => {
  const base = (overrides: Partial<DependencyCheckInput>): DependencyCheckInput => ({
    applySet: applySet('team-a/app'),
    dependsOn: [{ name: 'db' }],
    noCrossNamespaceRefs: false,
    reads: new Map(),
    safetyRequeueMs: 3_600_000,
    ...overrides,
  });

  it('goes on without dependencies, or when every one is Ready at its generation', () => {
    expect(dependencyOutcome(base({ dependsOn: [] }))).toBeUndefined();
    const db = applySet('team-a/db', {
      generation: 2,
      conditions: [ready('True', 'ReconciliationSucceeded', 2)],
    });
    expect(dependencyOutcome(base({ reads: new Map([['team-a/db', found(db)]]) }))).toBeUndefined();
  });

  it('waits, naming each dependency not ready and why, until the interval or a watch event', () => {
    const db = applySet('team-a/db', { generation: 3, conditions: [ready('False', 'HealthCheckFailed', 3)] });
    const cache = applySet('team-a/cache', { generation: 3, conditions: [ready('True', 'X', 2)] });
    const outcome = dependencyOutcome(
      base({
        dependsOn: [{ name: 'db' }, { name: 'cache' }, { name: 'gone' }],
        reads: new Map<string, DependencyRead>([
          ['team-a/db', found(db)],
          ['team-a/cache', found(cache)],
          ['team-a/gone', { kind: 'missing' }],
        ]),
      }),
    );
    expect(outcome).toEqual({
      kind: 'waiting',
      reason: 'DependencyNotReady',
      message:
        'waiting for dependencies: team-a/db: Ready=False (HealthCheckFailed); ' +
        'team-a/cache: generation 3 not yet observed; team-a/gone: not found',
      afterMs: 3_600_000,
    });
  });

  it('backs off when a dependency could not be read', () => {
    const outcome = dependencyOutcome(
      base({ reads: new Map([['team-a/db', { kind: 'unreadable', message: 'forbidden' }]]) }),
    );
    expect(outcome).toEqual({
      kind: 'retryable',
      reason: 'DependencyNotReady',
      message: 'waiting for dependencies: team-a/db: could not be read: forbidden',
    });
  });

  it('stalls on a cycle through the ApplySet, naming it in order, even when every dependency is Ready', () => {
    const b = applySet('team-a/b', { dependsOn: [{ name: 'c' }], conditions: [ready('True', 'X', 1)] });
    const c = applySet('team-a/c', { dependsOn: [{ name: 'a' }], conditions: [ready('True', 'X', 1)] });
    const outcome = dependencyOutcome(
      base({
        applySet: applySet('team-a/a'),
        dependsOn: [{ name: 'b' }],
        reads: new Map([
          ['team-a/b', found(b)],
          ['team-a/c', found(c)],
        ]),
      }),
    );
    expect(outcome).toEqual({
      kind: 'stalled',
      reason: 'DependencyCycle',
      message:
        'spec.dependsOn makes a cycle: team-a/a -> team-a/b -> team-a/c -> team-a/a; nothing was fetched or applied',
    });
    expect(
      dependencyOutcome(base({ applySet: applySet('team-a/a'), dependsOn: [{ name: 'a' }] })),
    ).toMatchObject({
      kind: 'stalled',
      reason: 'DependencyCycle',
      message: expect.stringContaining('team-a/a -> team-a/a;') as unknown,
    });
  });

  it('refuses another namespace by default, and allows it under --allow-cross-namespace-refs', () => {
    const queue = applySet('infra/queue', { conditions: [ready('True', 'X', 1)] });
    const input = base({
      dependsOn: [{ name: 'queue', namespace: 'infra' }],
      reads: new Map([['infra/queue', found(queue)]]),
    });
    expect(dependencyOutcome({ ...input, noCrossNamespaceRefs: true })).toEqual({
      kind: 'stalled',
      reason: 'CrossNamespaceRefRefused',
      message:
        'spec.dependsOn names ApplySet infra/queue of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied',
    });
    expect(dependencyOutcome(input)).toBeUndefined();
    // Its own namespace, spelt out, is not another one.
    expect(
      dependencyOutcome({
        ...base({ dependsOn: [{ name: 'queue', namespace: 'team-a' }] }),
        noCrossNamespaceRefs: true,
        reads: new Map([
          ['team-a/queue', found(applySet('team-a/queue', { conditions: [ready('True', 'X', 1)] }))],
        ]),
      }),
    ).toBeUndefined();
  });
});

describe('notReadyDependencies', () => {
  it('names each dependency not Ready once, with its Ready condition, as the waiting outcome does', () => {
    const db = applySet('team-a/db', { generation: 3, conditions: [ready('False', 'HealthCheckFailed', 3)] });
    const cache = applySet('team-a/cache', { generation: 3, conditions: [ready('True', 'X', 2)] });
    const ok = applySet('team-a/ok', { generation: 1, conditions: [ready('True', 'X', 1)] });
    const reads = new Map<string, DependencyRead>([
      ['team-a/db', found(db)],
      ['team-a/cache', found(cache)],
      ['team-a/ok', found(ok)],
      ['team-a/gone', { kind: 'missing' }],
      ['team-b/locked', { kind: 'unreadable', message: 'forbidden' }],
    ]);
    const keys = ['team-a/db', 'team-a/cache', 'team-a/ok', 'team-a/db', 'team-a/gone', 'team-b/locked'];
    expect(notReadyDependencies(keys, reads)).toEqual([
      {
        namespace: 'team-a',
        name: 'db',
        problem: 'Ready=False (HealthCheckFailed)',
        ready: { status: 'False', reason: 'HealthCheckFailed' },
        unreadable: false,
      },
      {
        namespace: 'team-a',
        name: 'cache',
        problem: 'generation 3 not yet observed',
        ready: { status: 'True', reason: 'X' },
        unreadable: false,
      },
      { namespace: 'team-a', name: 'gone', problem: 'not found', unreadable: false },
      { namespace: 'team-b', name: 'locked', problem: 'could not be read: forbidden', unreadable: true },
    ]);
  });
});
