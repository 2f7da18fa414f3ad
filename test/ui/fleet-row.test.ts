import type { ApplySet, ApplySetCondition } from '../../src/api/applyset-types.js';
import { mapReconcileOutcome } from '../../src/api/map-reconcile-outcome.js';
import type { ReconcileOutcome } from '../../src/api/reconcile-outcome.js';
import { inventoryItemId } from '../../src/api/status-inventory.js';
import { fleetState, matchesFilter, fleetRow } from '../../src/ui/fleet-row.js';
import { inventoryTree, parseInventoryItemId } from '../../src/ui/inventory-tree.js';
import { shortRevision } from '../../src/ui/render-fleet-page.js';

const when = '2026-01-01T00:00:00Z';
const cond = (type: ApplySetCondition['type'], status: ApplySetCondition['status']): ApplySetCondition => ({
  type,
  status,
  reason: 'R',
  message: `${type} ${status}`,
  lastTransitionTime: when,
});

function set(conditions: ApplySetCondition[], suspend = false): ApplySet {
  return {
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: { namespace: 'ns', name: 'a', labels: { team: 'web' } },
    spec: { source: { url: 'u', ref: { branch: 'main' } }, prune: true, suspend },
    status: { conditions },
  };
}

describe('fleetState', () => {
  it('reads the conditions as a person would: suspended first, then stalled, ready, in progress', () => {
    expect(fleetState(set([cond('Ready', 'True')], true))).toBe('Suspended');
    expect(fleetState(set([cond('Ready', 'False'), cond('Stalled', 'True')]))).toBe('Stalled');
    expect(fleetState(set([cond('Ready', 'True'), cond('Stalled', 'False')]))).toBe('Ready');
    expect(fleetState(set([cond('Ready', 'Unknown'), cond('Reconciling', 'True')]))).toBe('Progressing');
    expect(fleetState(set([cond('Ready', 'False')]))).toBe('Failing');
    expect(fleetState(set([]))).toBe('Unknown');
  });

  // Issue #34: the status the controller writes after a failed attempt (Ready False, Reconciling True
  // with ProgressingWithRetry) was shown as Progressing, so Failing never appeared.
  const afterRun = (outcome: ReconcileOutcome): ApplySet => ({
    ...set([]),
    status: mapReconcileOutcome({
      outcome,
      previous: undefined,
      generation: 1,
      intervalMs: 60_000,
      retryIntervalMs: 10_000,
      now: when,
      handledReconcileAt: undefined,
    }).status,
  });

  it.each([
    ['ApplyFailed', { kind: 'retryable', reason: 'ApplyFailed', message: 'the apply failed' }],
    ['GitUnreachable', { kind: 'retryable', reason: 'GitUnreachable', message: 'no answer' }],
    ['RemoteClusterUnreachable', { kind: 'retryable', reason: 'RemoteClusterUnreachable', message: 'down' }],
  ] as const)('shows a set whose last attempt failed (%s) as Failing, in its row too', (_, outcome) => {
    const applySet = afterRun(outcome);
    expect(fleetState(applySet)).toBe('Failing');
    const row = fleetRow(applySet);
    expect(matchesFilter(row, { namespace: '', label: '', state: 'Failing' })).toBe(true);
    expect(matchesFilter(row, { namespace: '', label: '', state: 'Progressing' })).toBe(false);
  });

  it('shows a set that waits for a dependency or a CRD as Progressing, not Failing', () => {
    for (const reason of ['DependencyNotReady', 'CrdNotEstablished']) {
      expect(fleetState(afterRun({ kind: 'waiting', reason, message: 'later', afterMs: 5_000 }))).toBe(
        'Progressing',
      );
    }
  });

  it('filters by namespace, state and a label as key or key=value', () => {
    const row = fleetRow(set([cond('Ready', 'True')]));
    expect(matchesFilter(row, { namespace: 'n', label: '', state: 'Ready' })).toBe(true);
    expect(matchesFilter(row, { namespace: 'other', label: '', state: '' })).toBe(false);
    expect(matchesFilter(row, { namespace: '', label: 'team', state: '' })).toBe(true);
    expect(matchesFilter(row, { namespace: '', label: 'team=web', state: '' })).toBe(true);
    expect(matchesFilter(row, { namespace: '', label: 'team=db', state: '' })).toBe(false);
    expect(matchesFilter(row, { namespace: '', label: '', state: 'Stalled' })).toBe(false);
  });
});

describe('the inventory as a tree', () => {
  it('reads back every id status.inventory writes, names with colons and underscores too', () => {
    const refs = [
      { namespace: 'shop', name: 'web', group: 'apps', kind: 'Deployment' },
      {
        namespace: '',
        name: 'system:auth-delegator',
        group: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
      },
      { namespace: 'shop', name: 'odd_name', group: '', kind: 'ConfigMap' },
    ];
    for (const ref of refs) expect(parseInventoryItemId(inventoryItemId(ref))).toEqual(ref);
    expect(parseInventoryItemId('nonsense')).toBeUndefined();
  });

  it('groups by namespace, then Kind.group, each sorted', () => {
    const state = (namespace: string, name: string, group: string, kind: string) => ({
      namespace,
      name,
      group,
      kind,
      health: 'Current',
      message: '',
    });
    const tree = inventoryTree([
      state('b', 'z', '', 'ConfigMap'),
      state('b', 'a', '', 'ConfigMap'),
      state('a', 'web', 'apps', 'Deployment'),
      state('', 'view', 'rbac.authorization.k8s.io', 'ClusterRole'),
    ]);
    expect(tree.map((node) => node.namespace)).toEqual(['', 'a', 'b']);
    expect(tree[1]?.kinds[0]?.kind).toBe('Deployment.apps');
    expect(tree[2]?.kinds[0]?.objects.map((object) => object.name)).toEqual(['a', 'z']);
  });
});

describe('shortRevision', () => {
  it('shortens a revision to its branch and seven hex digits', () => {
    expect(shortRevision(`main@sha1:${'ab'.repeat(20)}`)).toBe('main@abababa');
    expect(shortRevision(`sha1:${'0'.repeat(40)}`)).toBe('0000000');
    expect(shortRevision('')).toBe('');
  });
});
