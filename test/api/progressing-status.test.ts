import type { ApplySetStatus } from '../../src/api/applyset-types.js';
import { pendingNames, progressingMessage, progressingStatus } from '../../src/api/progressing-status.js';

const web = { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' };
const conditionOf = (status: ApplySetStatus, type: string) => status.conditions?.find((c) => c.type === type);

describe('progressingStatus', () => {
  const previous: ApplySetStatus = {
    observedGeneration: 2,
    lastAppliedRevision: 'main@sha1:old',
    summary: { applied: 1, unchanged: 0, pruned: 0, failed: 0 },
    errors: { items: [{ object: 'x', message: 'old failure' }], totalCount: 1, truncated: false },
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'ReconciliationSucceeded',
        message: 'Applied revision: main@sha1:old',
        lastTransitionTime: '2024-05-01T09:00:00Z',
        observedGeneration: 2,
      },
      {
        type: 'Drifted',
        status: 'False',
        reason: 'NoDrift',
        message: 'no drift',
        lastTransitionTime: '2024-05-01T09:00:00Z',
      },
    ],
  };

  it('says Ready Unknown, reason Progressing, naming the objects waited for, at the new generation', () => {
    const status = progressingStatus({
      previous,
      generation: 3,
      namespace: 'shop',
      revision: 'main@sha1:new',
      pending: [{ ref: web, message: '0 of 3 replicas available' }],
      now: '2024-05-01T10:00:00Z',
    });
    expect(conditionOf(status, 'Ready')).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'Progressing',
      message: 'waiting for deployment.apps/web: 0 of 3 replicas available',
      lastTransitionTime: '2024-05-01T10:00:00Z',
      observedGeneration: 3,
    });
    expect(conditionOf(status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Progressing' });
    expect(conditionOf(status, 'Stalled')).toMatchObject({ status: 'False', reason: 'Progressing' });
    // The safe-mode conditions stay as they were; the last applied revision too, until the run ends.
    expect(conditionOf(status, 'Drifted')).toEqual(previous.conditions?.[1]);
    expect(status).toMatchObject({
      observedGeneration: 3,
      lastAppliedRevision: 'main@sha1:old',
      lastAttemptedRevision: 'main@sha1:new',
      summary: previous.summary,
      errors: { items: [], totalCount: 0, truncated: false },
    });
  });

  it('keeps the transition time of a condition whose status does not change', () => {
    const first = progressingStatus({
      previous,
      generation: 3,
      namespace: 'shop',
      revision: 'r',
      pending: [{ ref: web, message: 'a' }],
      now: '2024-05-01T10:00:00Z',
    });
    const second = progressingStatus({
      previous: first,
      generation: 3,
      namespace: 'shop',
      revision: 'r',
      pending: [{ ref: web, message: 'b' }],
      now: '2024-05-01T10:05:00Z',
    });
    expect(conditionOf(second, 'Ready')?.lastTransitionTime).toBe('2024-05-01T10:00:00Z');
    expect(conditionOf(second, 'Ready')?.message).toBe('waiting for deployment.apps/web: b');
  });
});

describe('progressingMessage', () => {
  it('names five objects, the namespace of those outside the ApplySet`s, and counts the rest', () => {
    const pending = Array.from({ length: 7 }, (_, i) => ({
      ref: { group: '', kind: 'ConfigMap', namespace: i === 0 ? 'other' : 'shop', name: `c${i}` },
      message: 'the object does not exist',
    }));
    expect(progressingMessage(pending, 'shop')).toBe(
      'waiting for configmap/c0 (namespace other): the object does not exist; ' +
        ['c1', 'c2', 'c3', 'c4'].map((n) => `configmap/${n}: the object does not exist`).join('; ') +
        '; and 2 more',
    );
  });

  it('names cluster-scoped objects without a namespace', () => {
    const crd = {
      group: 'apiextensions.k8s.io',
      kind: 'CustomResourceDefinition',
      namespace: '',
      name: 'a.b',
    };
    expect(progressingMessage([{ ref: crd, message: 'not established' }], 'shop')).toBe(
      'waiting for customresourcedefinition.apiextensions.k8s.io/a.b: not established',
    );
  });
});

describe('pendingNames', () => {
  it('depends on which objects are waited for, not on their order or messages', () => {
    const db = { ...web, name: 'db' };
    expect(
      pendingNames([
        { ref: web, message: 'a' },
        { ref: db, message: 'b' },
      ]),
    ).toBe(
      pendingNames([
        { ref: db, message: 'c' },
        { ref: web, message: 'd' },
      ]),
    );
    expect(pendingNames([{ ref: web, message: 'a' }])).not.toBe(pendingNames([{ ref: db, message: 'a' }]));
  });
});
