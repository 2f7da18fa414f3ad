import { mapReconcileOutcome, type MapOutcomeInput } from '../../src/api/map-reconcile-outcome.js';
import type { ApplySetStatus } from '../../src/api/applyset-types.js';

// The safe modes as mapReconcileOutcome writes them: conditions, bounded lists, events, and their
// removal when the mode is switched off.

const counts = { created: 0, configured: 0, unchanged: 1, pruned: 0, failed: 0, conflicts: 0 };
const drift = [{ object: 'ns::ConfigMap:a', fields: ['data.v'] }];

function map(input: Partial<MapOutcomeInput>) {
  return mapReconcileOutcome({
    outcome: { kind: 'applied', revision: 'main@sha1:1', counts, drift },
    previous: undefined,
    generation: 1,
    intervalMs: 1000,
    retryIntervalMs: 1000,
    now: '2024-05-01T10:00:00Z',
    handledReconcileAt: undefined,
    ...input,
  });
}

const warn = { driftMode: 'Warn' as const, pruneDryRun: false, fighting: [], newlyFighting: [] };

describe('safe modes in status', () => {
  it('reports drift in Warn: Drifted, status.drift and one DriftDetected event per new message', () => {
    const first = map({ safeModes: warn });
    const drifted = first.status.conditions?.find((c) => c.type === 'Drifted');
    expect(drifted).toMatchObject({ status: 'True', reason: 'DriftDetected' });
    expect(first.status.drift).toEqual({
      items: [{ object: 'ns::ConfigMap:a', message: 'changed: data.v' }],
      totalCount: 1,
      truncated: false,
    });
    expect(first.events.map((e) => e.reason)).toContain('DriftDetected');
    expect(map({ safeModes: warn, previous: first.status }).events.map((e) => e.reason)).not.toContain(
      'DriftDetected',
    );
  });

  it('adds nothing in Correct mode, and removes the lists of a mode switched off', () => {
    const plain = map({});
    expect(plain.status.conditions?.map((c) => c.type)).toEqual(['Ready', 'Reconciling', 'Stalled']);
    expect('drift' in plain.status).toBe(false);
    const previous: ApplySetStatus = {
      drift: { items: [], totalCount: 0, truncated: false },
      wouldPrune: { items: [], totalCount: 0, truncated: false },
    };
    const off = map({ previous });
    expect([off.status.drift, off.status.wouldPrune]).toEqual([null, null]);
  });

  it('sets Fighting with a Warning event, then False once the fight is over', () => {
    const fight = [{ object: 'ns::ConfigMap:f', fields: ['data.v'] }];
    const on = map({ safeModes: { ...warn, driftMode: 'Correct', fighting: fight, newlyFighting: fight } });
    expect(on.status.conditions?.find((c) => c.type === 'Fighting')).toMatchObject({
      status: 'True',
      message: expect.stringContaining('ns::ConfigMap:f: data.v'),
    });
    expect(on.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'Fighting' }));
    const over = map({ previous: on.status, safeModes: { ...warn, driftMode: 'Correct' } });
    expect(over.status.conditions?.find((c) => c.type === 'Fighting')).toMatchObject({
      status: 'False',
      reason: 'NoFight',
    });
  });
});
