import { createDependentsIndex } from '../../../src/controller/runtime/dependents-index.js';
import { needsReconcile } from '../../../src/controller/runtime/watched-applyset.js';
import type { InformerEvent } from '../../../src/kube/informer-cache.js';

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

describe('the dependents index', () => {
  const db = (generation: number, ready: string, reason = 'X', observedGeneration = generation) => ({
    metadata: { name: 'db', namespace: 'n', generation },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: ready, reason, message: 'm', observedGeneration }] },
  });
  const app = { metadata: { name: 'app', namespace: 'n' }, spec: { dependsOn: [{ name: 'db' }] } };
  const other = { metadata: { name: 'other', namespace: 'o' }, spec: { dependsOn: [{ name: 'db' }] } };
  /** An index that has seen `app` and `other` added, then what `events` wake in turn. */
  const wakes = (...events: InformerEvent[]) => {
    const index = createDependentsIndex();
    index.dependentsToWake({ type: 'added', object: app });
    index.dependentsToWake({ type: 'added', object: other });
    return events.map((event) => index.dependentsToWake(event));
  };

  it.each([
    ['becoming Ready', db(1, 'False'), db(1, 'True'), ['n/app']],
    ['a new generation', db(1, 'True'), db(2, 'True', 'X', 1), ['n/app']],
    ['a new reason', db(1, 'False', 'A'), db(1, 'False', 'B'), ['n/app']],
    ['the same readiness with a new message', db(1, 'False'), { ...db(1, 'False'), extra: 1 }, []],
  ])('%s wakes %j', (_what, previous, object, expected) => {
    expect(wakes({ type: 'modified', previous, object })).toEqual([expected]);
  });

  it('wakes the dependents of an ApplySet that appears or goes, only those of its namespace`s key', () => {
    expect(
      wakes({ type: 'added', object: db(1, 'True') }, { type: 'deleted', object: db(1, 'True') }),
    ).toEqual([['n/app'], ['n/app']]);
  });

  it('follows a dependsOn changed or gone, and an ApplySet deleted', () => {
    const alone = { ...app, spec: {} };
    const ready = { type: 'added', object: db(1, 'True') } as const;
    // app no longer waits for db: db's change wakes nobody; named again, it does.
    expect(wakes({ type: 'modified', previous: app, object: alone }, ready)).toEqual([[], []]);
    expect(
      wakes(
        { type: 'modified', previous: app, object: alone },
        { type: 'modified', previous: alone, object: app },
        ready,
      ),
    ).toEqual([[], [], ['n/app']]);
    expect(wakes({ type: 'deleted', object: app }, ready)).toEqual([[], []]);
    // db's own dependsOn (on app) is kept apart from who waits for db.
    const dbOnApp = { ...db(1, 'True'), spec: { dependsOn: [{ name: 'app' }] } };
    expect(wakes({ type: 'added', object: dbOnApp }, { type: 'deleted', object: app })).toEqual([
      ['n/app'],
      ['n/db'],
    ]);
  });
});
