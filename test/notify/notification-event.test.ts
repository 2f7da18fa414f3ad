import type { ReconcileOutcome } from '../../src/api/reconcile-outcome.js';
import { dedupeKeyOf, newsOf, notificationEventsOf } from '../../src/notify/notification-event.js';

const set = { namespace: 'team-a', name: 'web' };
const counts = { created: 1, configured: 1, unchanged: 3, pruned: 1, failed: 0, conflicts: 0 };
const applied: ReconcileOutcome = {
  kind: 'applied',
  revision: 'abc123',
  counts,
  changes: { created: ['deployment.apps/web'], configured: ['service/web'], pruned: ['configmap/old'] },
};
const failed: ReconcileOutcome = {
  kind: 'retryable',
  reason: 'ApplyFailed',
  message: 'revision def456 failed: 1 object',
  revision: 'def456',
  errors: [{ object: 'team-a::ConfigMap:bad', message: 'data: must be a map' }],
};

describe('notificationEventsOf', () => {
  test('an apply names its counts and every object created, configured and pruned', () => {
    const [event] = notificationEventsOf(set, applied);
    expect(event).toMatchObject({ topic: 'sync', state: 'applied', severity: 'info', revision: 'abc123' });
    expect(event?.summary).toContain('1 created, 1 configured, 1 pruned');
    expect(event?.details).toEqual([
      'deployment.apps/web: created',
      'service/web: configured',
      'configmap/old: pruned',
    ]);
  });

  test('a failure carries its reason and the first objects with their errors', () => {
    const [event] = notificationEventsOf(set, failed);
    expect(event).toMatchObject({ state: 'failed', severity: 'error', reason: 'ApplyFailed' });
    expect(event?.details).toEqual(['team-a::ConfigMap:bad: data: must be a map']);
  });

  test('an apply after a failure is a recovery; after an apply it is not', () => {
    expect(notificationEventsOf(set, applied, { previousSync: 'failed' })[0]?.state).toBe('recovered');
    expect(notificationEventsOf(set, applied, { previousSync: 'applied' })[0]?.state).toBe('applied');
  });

  test('health timeout, prune limit and stall are told apart', () => {
    const of = (outcome: ReconcileOutcome) => notificationEventsOf(set, outcome)[0]?.state;
    expect(of({ kind: 'retryable', reason: 'HealthCheckFailed', message: 'm' })).toBe('healthTimeout');
    expect(of({ kind: 'stalled', reason: 'PruneLimitExceeded', message: 'm' })).toBe('pruneWaiting');
    expect(of({ kind: 'stalled', reason: 'InvalidManifests', message: 'm' })).toBe('stalled');
  });

  test('drift in Warn mode and a fight are strands of their own', () => {
    const events = notificationEventsOf(
      set,
      { ...applied, drift: [{ object: 'team-a:apps:Deployment:web', fields: ['spec.replicas'] }] },
      { fighting: ['team-a:apps:Deployment:web'] },
    );
    expect(events.map((e) => [e.topic, e.state])).toEqual([
      ['sync', 'applied'],
      ['drift', 'driftDetected'],
      ['fight', 'fighting'],
    ]);
    expect(events[1]?.details).toEqual(['team-a:apps:Deployment:web: spec.replicas']);
  });

  test('a change back is a correction only on a revision applied before', () => {
    const corrected = { ...applied, corrections: [{ object: 'team-a::ConfigMap:c', fields: ['data.k'] }] };
    expect(notificationEventsOf(set, corrected).map((e) => e.state)).toEqual(['applied']);
    expect(notificationEventsOf(set, corrected, { steady: true }).map((e) => e.state)).toEqual([
      'applied',
      'driftCorrected',
    ]);
  });

  test('a long list of objects is cut to ten, the rest counted', () => {
    const many = Array.from({ length: 25 }, (_, i) => `configmap/c${i}`);
    const [event] = notificationEventsOf(set, {
      ...applied,
      changes: { created: many, configured: [], pruned: [] },
    });
    expect(event?.details).toHaveLength(11);
    expect(event?.details.at(-1)).toBe('... and 15 more');
  });

  test('the same state at the same revision is the same message; a new revision is not', () => {
    const once = dedupeKeyOf(notificationEventsOf(set, failed)[0]!);
    expect(dedupeKeyOf(notificationEventsOf(set, failed)[0]!)).toBe(once);
    expect(dedupeKeyOf(notificationEventsOf(set, { ...failed, revision: 'fff' })[0]!)).not.toBe(once);
  });

  test("a run's news leaves the ApplySet out, and changes with the state, the revision and the strand", () => {
    const other = { namespace: 'team-b', name: 'web' };
    const news = newsOf(notificationEventsOf(set, applied));
    expect(newsOf(notificationEventsOf(other, applied))).toBe(news);
    expect(newsOf(notificationEventsOf(set, { ...applied, revision: 'fff' }))).not.toBe(news);
    expect(newsOf(notificationEventsOf(set, failed))).not.toBe(news);
    expect(newsOf(notificationEventsOf(set, applied, { fighting: ['Deployment/web'] }))).not.toBe(news);
    // A recovery's next apply at the same revision tells nothing new.
    const recovered = notificationEventsOf(set, applied, { previousSync: 'failed' });
    expect(newsOf(notificationEventsOf(set, applied, { previousSync: 'recovered' }))).toBe(newsOf(recovered));
  });

  test('the apply after a recovery, at the same revision, is no new message', () => {
    const recovered = notificationEventsOf(set, applied, { previousSync: 'failed' })[0]!;
    const next = notificationEventsOf(set, applied, { previousSync: 'recovered' })[0]!;
    expect(dedupeKeyOf(next)).toBe(dedupeKeyOf(recovered));
  });
});
