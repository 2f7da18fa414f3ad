import type { ApplySetStatus } from '../../src/api/applyset-types.js';
import { EVENT_MESSAGE_LIMIT } from '../../src/api/describe-outcome.js';
import { mapReconcileOutcome, type MapOutcomeInput } from '../../src/api/map-reconcile-outcome.js';

const counts = { created: 2, configured: 1, unchanged: 3, pruned: 1, failed: 0, conflicts: 0 };
const base: Omit<MapOutcomeInput, 'outcome'> = {
  previous: undefined,
  generation: 4,
  intervalMs: 300_000,
  retryIntervalMs: 60_000,
  now: '2024-05-01T10:00:00Z',
  handledReconcileAt: undefined,
};
const conditionOf = (status: ApplySetStatus, type: string) => status.conditions?.find((c) => c.type === type);

describe('mapReconcileOutcome', () => {
  it('names in Ready (so in status) the objects applied server-side, and why', () => {
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: {
        kind: 'applied',
        revision: 'r',
        counts,
        serverSide: [
          'customresourcedefinition.apiextensions.k8s.io/big.example.com (annotation would be 389 KB)',
        ],
      },
    });
    expect(conditionOf(mapped.status, 'Ready')?.message).toBe(
      'Applied revision: r (server-side: customresourcedefinition.apiextensions.k8s.io/big.example.com (annotation would be 389 KB))',
    );
    expect(mapped.events[0]?.message).toContain('(server-side: customresourcedefinition');
  });

  it('names in the event what was created, configured and pruned, ten at most per verb', () => {
    const created = Array.from({ length: 12 }, (_, i) => `configmap/c${i} -n shop`);
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: {
        kind: 'applied',
        revision: 'main@sha1:abc',
        counts: { ...counts, created: 12 },
        changes: { created, configured: ['deployment.apps/web -n shop'], pruned: ['configmap/old -n shop'] },
      },
    });
    expect(mapped.events[0]?.message).toBe(
      'Applied revision: main@sha1:abc: 12 created, 1 configured, 3 unchanged, 1 pruned; created ' +
        `${created.slice(0, 10).join(', ')} (+2 more, 12 in all); configured deployment.apps/web -n shop; pruned configmap/old -n shop`,
    );
  });

  it('keeps the event within the length limit: long lists are counted, and every verb keeps its total', () => {
    const long = (verb: string) =>
      Array.from({ length: 40 }, (_, i) => `deployment.apps/${verb}-${'x'.repeat(60)}-${i} -n shop`);
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: {
        kind: 'applied',
        revision: 'main@sha1:abc',
        counts: { ...counts, created: 40, configured: 40, pruned: 40 },
        changes: { created: long('c'), configured: long('u'), pruned: long('p') },
      },
    });
    const message = mapped.events[0]?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(EVENT_MESSAGE_LIMIT);
    for (const verb of ['created', 'configured', 'pruned'])
      expect(message).toMatch(new RegExp(`; ${verb} deployment\\.apps/[^;]* \\(\\+\\d+ more, 40 in all\\)`));
    expect(message).toContain(`pruned ${long('p')[0]}`);
  });

  it('status.inventory lists what the engine says the set holds, sorted compact ids', () => {
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: { kind: 'applied', revision: 'r', counts },
      held: [
        { group: '', kind: 'Service', namespace: 'shop', name: 'web' },
        { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
      ],
    });
    expect(mapped.status.inventory).toEqual({
      items: ['shop_web__Service', 'shop_web_apps_Deployment'],
      totalCount: 2,
      truncated: false,
    });
  });

  it('status.inventory stays as it was when the run did not reach the engine', () => {
    const inventory = { items: ['shop_web__Service'], totalCount: 1, truncated: false };
    const mapped = mapReconcileOutcome({
      ...base,
      previous: { inventory },
      outcome: { kind: 'retryable', reason: 'GitUnreachable', message: 'down' },
    });
    expect(mapped.status.inventory).toEqual(inventory);
  });

  it('success: Ready, the revision, the counts, an event, requeue after the interval', () => {
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: { kind: 'applied', revision: 'main@sha1:abc', counts },
    });
    expect(conditionOf(mapped.status, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'ReconciliationSucceeded',
      message: 'Applied revision: main@sha1:abc',
      observedGeneration: 4,
    });
    expect(conditionOf(mapped.status, 'Stalled')?.status).toBe('False');
    expect(mapped.status).toMatchObject({
      observedGeneration: 4,
      lastAppliedRevision: 'main@sha1:abc',
      lastAttemptedRevision: 'main@sha1:abc',
      summary: { applied: 3, unchanged: 3, pruned: 1, failed: 0 },
      errors: { items: [], totalCount: 0, truncated: false },
    });
    expect(mapped.events).toEqual([
      {
        type: 'Normal',
        reason: 'ReconciliationSucceeded',
        message: 'Applied revision: main@sha1:abc: 2 created, 1 configured, 3 unchanged, 1 pruned',
      },
    ]);
    expect(mapped.requeue).toEqual({ kind: 'interval', intervalMs: 300_000 });
  });

  it('a run of the revision already applied that changed nothing writes the same status again (issue #39)', () => {
    const applied = mapReconcileOutcome({
      ...base,
      outcome: { kind: 'applied', revision: 'main@sha1:abc', counts: { ...counts, pruned: 0 } },
    });
    const atRest = { created: 0, configured: 0, unchanged: 6, pruned: 0, failed: 0, conflicts: 0 };
    const next = (revision: string, runCounts: typeof counts) =>
      mapReconcileOutcome({
        ...base,
        now: '2024-05-01T10:05:00Z',
        previous: applied.status,
        outcome: { kind: 'applied', revision, counts: runCounts },
      });
    // Nothing changed: the whole status as it was, so the status writer sends nothing.
    expect(next('main@sha1:abc', atRest).status).toEqual(applied.status);
    // A correction, a failure or a new revision is news: its own counts.
    expect(next('main@sha1:abc', { ...atRest, unchanged: 5, configured: 1 }).status.summary).toMatchObject({
      applied: 1,
      unchanged: 5,
    });
    expect(next('main@sha1:def', atRest).status.summary).toMatchObject({ applied: 0, unchanged: 6 });
  });

  it('an adoption is counted in the summary and the event names the objects taken over', () => {
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: {
        kind: 'applied',
        revision: 'r',
        counts: { ...counts, adopted: 2 },
        adopted: ['team-a::ConfigMap:settings', 'team-a:apps:Deployment:web'],
      },
    });
    expect(mapped.status.summary).toMatchObject({ applied: 3, adopted: 2 });
    expect(mapped.events.map((event) => event.message)).toEqual([
      'Applied revision: r: 2 created, 1 configured, 3 unchanged, 1 pruned, 2 adopted; adopted: team-a::ConfigMap:settings, team-a:apps:Deployment:web',
    ]);
    expect(
      mapReconcileOutcome({ ...base, outcome: { kind: 'applied', revision: 'r', counts } }).status.summary,
    ).toMatchObject({
      adopted: 0,
    });
  });

  it('objects kept because another set owns them are in status.errors and a Warning event, the set Ready', () => {
    const kept = [
      { object: 'team-b::ConfigMap:x', message: 'not pruned: kept: owned by another set (apply-owner u)' },
    ];
    const mapped = mapReconcileOutcome({
      ...base,
      outcome: { kind: 'applied', revision: 'r', counts, keptForOthers: kept },
    });
    expect(conditionOf(mapped.status, 'Ready')?.status).toBe('True');
    expect(mapped.status.errors).toEqual({ items: kept, totalCount: 1, truncated: false });
    expect(mapped.events).toContainEqual({
      type: 'Warning',
      reason: 'PruneSkippedOwnedByOther',
      message: expect.stringContaining(
        'team-b::ConfigMap:x: not pruned: kept: owned by another set (apply-owner u)',
      ),
    });
  });

  it('a drift check that changed nothing records no event and keeps the transition time', () => {
    const first = mapReconcileOutcome({ ...base, outcome: { kind: 'applied', revision: 'r', counts } });
    const quiet = { ...counts, created: 0, configured: 0, pruned: 0, unchanged: 6 };
    const again = mapReconcileOutcome({
      ...base,
      now: '2024-05-01T10:05:00Z',
      previous: first.status,
      outcome: { kind: 'applied', revision: 'r', counts: quiet },
    });
    expect(again.events).toEqual([]);
    expect(conditionOf(again.status, 'Ready')?.lastTransitionTime).toBe('2024-05-01T10:00:00Z');
  });

  it('stalled: Ready=False, Stalled=True, the last applied revision kept, bounded errors, poll at the interval', () => {
    const previous = mapReconcileOutcome({
      ...base,
      outcome: { kind: 'applied', revision: 'old', counts },
    }).status;
    const errors = Array.from({ length: 25 }, (_, i) => ({ object: `f${i}.yaml`, message: 'bad' }));
    const mapped = mapReconcileOutcome({
      ...base,
      previous,
      now: '2024-05-01T10:01:00Z',
      outcome: {
        kind: 'stalled',
        reason: 'InvalidManifests',
        message: 'f0.yaml: bad',
        revision: 'new',
        errors,
      },
    });
    expect(conditionOf(mapped.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidManifests',
    });
    expect(conditionOf(mapped.status, 'Ready')?.lastTransitionTime).toBe('2024-05-01T10:01:00Z');
    expect(conditionOf(mapped.status, 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'InvalidManifests',
    });
    expect(mapped.status.lastAppliedRevision).toBe('old');
    expect(mapped.status.lastAttemptedRevision).toBe('new');
    expect(mapped.status.errors).toMatchObject({ totalCount: 25, truncated: true });
    expect(mapped.status.errors?.items).toHaveLength(20);
    expect(mapped.events).toEqual([{ type: 'Warning', reason: 'InvalidManifests', message: 'f0.yaml: bad' }]);
    expect(mapped.requeue).toEqual({ kind: 'interval', intervalMs: 300_000 });
  });

  it('retryable: Reconciling=True, backoff up to retryInterval, one event per distinct failure', () => {
    const outcome = { kind: 'retryable', reason: 'GitUnreachable', message: 'x is unreachable' } as const;
    const first = mapReconcileOutcome({ ...base, outcome });
    expect(conditionOf(first.status, 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'ProgressingWithRetry',
    });
    expect(conditionOf(first.status, 'Stalled')?.status).toBe('False');
    expect(first.requeue).toEqual({ kind: 'backoff', maxDelayMs: 60_000 });
    expect(first.events).toHaveLength(1);
    expect(mapReconcileOutcome({ ...base, previous: first.status, outcome }).events).toEqual([]);
  });

  it('waiting requeues after the known delay; a handled request is echoed', () => {
    const mapped = mapReconcileOutcome({
      ...base,
      handledReconcileAt: '2024-05-01T09:59:00Z',
      outcome: { kind: 'waiting', reason: 'DependencyNotReady', message: 'waiting', afterMs: 5000 },
    });
    expect(mapped.requeue).toEqual({ kind: 'interval', intervalMs: 5000 });
    expect(mapped.status.lastHandledReconcileAt).toBe('2024-05-01T09:59:00Z');
  });
});
