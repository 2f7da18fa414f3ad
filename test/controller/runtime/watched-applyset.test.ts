import { dependentsToWake, needsReconcile } from '../../../src/controller/runtime/watched-applyset.js';

describe('needsReconcile', () => {
  const object = (generation: number, annotations: Record<string, string> = {}, extra: object = {}) => ({
    metadata: { name: 'a', namespace: 'n', generation, annotations, ...extra },
  });
  it.each([
    ['a status or metadata write by the controller', object(1), object(1, { note: 'x' }), false],
    ['a spec change', object(1), object(2), true],
    ['a reconcile request', object(1), object(1, { 'applyset.dev/reconcile-requested-at': 'now' }), true],
    ['a deletion', object(1), object(1, {}, { deletionTimestamp: '2024-01-01T00:00:00Z' }), true],
    [
      'an approval to prune past the limit',
      object(1),
      object(1, { 'applyset.dev/approve-prune': 'main@sha1:abc' }),
      true,
    ],
  ])('%s: reconcile is %s', (_what, previous, next, expected) => {
    expect(needsReconcile({ type: 'modified', object: next, previous })).toBe(expected);
  });
});

describe('dependentsToWake', () => {
  const db = (generation: number, ready: string, reason = 'X', observedGeneration = generation) => ({
    metadata: { name: 'db', namespace: 'n', generation },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: ready, reason, message: 'm', observedGeneration }] },
  });
  const app = { metadata: { name: 'app', namespace: 'n' }, spec: { dependsOn: [{ name: 'db' }] } };
  const other = { metadata: { name: 'other', namespace: 'o' }, spec: { dependsOn: [{ name: 'db' }] } };
  const all = [app, other, db(1, 'True')];

  it.each([
    ['becoming Ready', db(1, 'False'), db(1, 'True'), ['n/app']],
    ['a new generation', db(1, 'True'), db(2, 'True', 'X', 1), ['n/app']],
    ['a new reason', db(1, 'False', 'A'), db(1, 'False', 'B'), ['n/app']],
    ['the same readiness with a new message', db(1, 'False'), { ...db(1, 'False'), extra: 1 }, []],
  ])('%s wakes %j', (_what, previous, object, expected) => {
    expect(dependentsToWake({ type: 'modified', previous, object }, () => all)).toEqual(expected);
  });

  it('wakes the dependents of an ApplySet that appears or goes, only those of its namespace`s key', () => {
    expect(dependentsToWake({ type: 'added', object: db(1, 'True') }, () => all)).toEqual(['n/app']);
    expect(dependentsToWake({ type: 'deleted', object: db(1, 'True') }, () => all)).toEqual(['n/app']);
  });
});
