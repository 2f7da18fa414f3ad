import type { ManifestObject } from '../../src/manifests/manifest-object.js';
import { objectRefKey, type ObjectRef } from '../../src/manifests/object-ref.js';
import type { LiveState } from '../../src/inventory/live-state.js';
import { buildPlan } from '../../src/plan/build-plan.js';
import { formatDryRunSummary, summarizePlan } from '../../src/plan/summarize-plan.js';

const ref = (name: string, kind = 'ConfigMap', namespace = 'default'): ObjectRef => ({
  group: '',
  kind,
  namespace,
  name,
});
const desired = (r: ObjectRef): ManifestObject => ({
  ref: r,
  apiVersion: 'v1',
  version: 'v1',
  scope: 'Namespaced',
  manifest: { apiVersion: 'v1', kind: r.kind, metadata: { name: r.name, namespace: r.namespace } },
  source: { file: 'set.yaml', documentIndex: 0 },
});
const owned = (owner: string, extra: Record<string, string> = {}): LiveState => ({
  status: 'present',
  object: { metadata: { annotations: { 'kubectl.kubernetes.io/apply-owner': owner, ...extra } } },
});

describe('summarizePlan', () => {
  const [added, modified, same, uncompared, deleted, theirs, kept] = [
    'added',
    'modified',
    'same',
    'uncompared',
    'deleted',
    'theirs',
    'kept',
  ].map((name) => ref(name)) as [ObjectRef, ObjectRef, ObjectRef, ObjectRef, ObjectRef, ObjectRef, ObjectRef];
  const result = buildPlan({
    desired: [added, modified, same, uncompared, theirs].map(desired),
    inventoryOld: [modified, same, uncompared, deleted, kept],
    live: new Map<string, LiveState>([
      [objectRefKey(added), { status: 'absent' }],
      [objectRefKey(modified), owned('me')],
      [objectRefKey(same), owned('me')],
      [objectRefKey(uncompared), owned('me')],
      [objectRefKey(theirs), owned('other')],
      [objectRefKey(deleted), owned('me')],
      [objectRefKey(kept), owned('me', { 'applyset.dev/prune': 'disabled' })],
    ]),
    policy: { ownerUid: 'me', adopt: true, prune: true, allowEmpty: false },
  });
  if (!result.ok) throw new Error('refused');
  const changes = new Map([
    [objectRefKey(modified), [{ path: 'data.mode', before: 'slow', after: 'fast' }]],
    [objectRefKey(same), []],
  ]);

  it('sorts actions into the dry-run categories', () => {
    const summary = summarizePlan(result.plan, changes);
    expect(summary).toEqual({
      toAdd: [added],
      toModify: [{ ref: modified, changes: [{ path: 'data.mode', before: 'slow', after: 'fast' }] }],
      unchanged: [same],
      notCompared: [uncompared],
      toDelete: [deleted],
      conflicts: [{ ref: theirs, detail: 'owned by another set (apply-owner other)' }],
      notRead: [],
      notPruned: [{ ref: kept, reason: 'prune-disabled', detail: 'annotated applyset.dev/prune: disabled' }],
    });
  });

  it("prints the proposal's sections", () => {
    expect(formatDryRunSummary(summarizePlan(result.plan, changes))).toBe(
      [
        'Resources to add',
        '  configmap/added -n default',
        'Resources modified',
        '  configmap/modified -n default',
        '    data.mode: "slow" → "fast"',
        'Resources unmodified',
        '  configmap/same -n default',
        'Resources to update if changed (not compared)',
        '  configmap/uncompared -n default',
        'Resources to delete',
        '  configmap/deleted -n default',
        'Conflicts (left untouched)',
        '  configmap/theirs -n default: owned by another set (apply-owner other)',
        'Not pruned',
        '  configmap/kept -n default: annotated applyset.dev/prune: disabled',
        '',
      ].join('\n'),
    );
  });

  it('prints (none) for the empty main sections', () => {
    const empty = buildPlan({
      desired: [],
      inventoryOld: [],
      live: new Map(),
      policy: { ownerUid: undefined, adopt: true, prune: true, allowEmpty: false },
    });
    if (!empty.ok) throw new Error('refused');
    expect(formatDryRunSummary(summarizePlan(empty.plan))).toBe(
      'Resources to add\n  (none)\nResources modified\n  (none)\nResources unmodified\n  (none)\nResources to delete\n  (none)\n',
    );
  });
});
