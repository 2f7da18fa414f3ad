import { needsReconcile } from '../../src/controller/watched-applyset.js';

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
