import type { LiveState } from '../../src/inventory/live-state.js';
import { objectRefKey, type ObjectRef } from '../../src/manifests/object-ref.js';
import { buildPlan } from '../../src/plan/build-plan.js';

// spec.prune DryRun in the pure plan: candidates judged as a prune would, nothing deleted, all kept.

const OURS = 'uid-ours';
const ref = (name: string): ObjectRef => ({ group: '', kind: 'ConfigMap', namespace: 'default', name });
const owned = (r: ObjectRef, annotations: Record<string, string> = {}): LiveState => ({
  status: 'present',
  object: {
    kind: r.kind,
    metadata: {
      name: r.name,
      namespace: r.namespace,
      annotations: { 'kubectl.kubernetes.io/apply-owner': OURS, ...annotations },
    },
  },
});

describe('buildPlan with pruneDryRun', () => {
  const gone = ref('gone');
  const kept = ref('kept');
  const live = new Map([
    [objectRefKey(gone), owned(gone)],
    [objectRefKey(kept), owned(kept, { 'applyset.dev/prune': 'disabled' })],
  ]);

  it('turns each deletion into a dry-run keep and keeps it in the inventory', () => {
    const result = buildPlan({
      desired: [],
      inventoryOld: [gone, kept],
      live,
      policy: { ownerUid: OURS, adopt: true, prune: true, pruneDryRun: true, allowEmpty: true },
    });
    if (!result.ok) throw new Error('refused');
    const prunes = result.plan.steps.flatMap((step) => (step.type === 'prune-wave' ? step.actions : []));
    expect(prunes.map((a) => [a.ref.name, a.type, a.type === 'skip' ? a.reason : ''])).toEqual([
      ['gone', 'skip', 'dry-run'],
      ['kept', 'skip', 'prune-disabled'],
    ]);
    const narrow = result.plan.steps.find((step) => step.type === 'narrow-inventory');
    expect(narrow).toMatchObject({
      keep: [gone, kept].sort((a, b) => a.name.localeCompare(b.name)),
      deleting: [],
    });
  });

  it('deletes as before without it', () => {
    const result = buildPlan({
      desired: [],
      inventoryOld: [gone],
      live,
      policy: { ownerUid: OURS, adopt: true, prune: true, allowEmpty: true },
    });
    if (!result.ok) throw new Error('refused');
    const prunes = result.plan.steps.flatMap((step) => (step.type === 'prune-wave' ? step.actions : []));
    expect(prunes.map((a) => a.type)).toEqual(['delete']);
  });
});
