import type { JsonObject } from '../../src/manifests/json-value.js';
import type { LiveState } from '../../src/inventory/live-state.js';
import {
  mayApply,
  mayPrune,
  type ApplyVerdict,
  type PruneVerdict,
} from '../../src/inventory/ownership-policy.js';

function present(annotations: Record<string, string> = {}): LiveState {
  const object: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', annotations } };
  return { status: 'present', object };
}
const ours = { 'kubectl.kubernetes.io/apply-owner': 'uid-ours' };
const theirs = { 'kubectl.kubernetes.io/apply-owner': 'uid-theirs' };
const failure = new Error('503 Service Unavailable');

describe('mayApply', () => {
  it.each<[string, LiveState, { ownerUid: string | undefined; adopt: boolean }, ApplyVerdict]>([
    [
      'creates an absent object',
      { status: 'absent' },
      { ownerUid: 'uid-ours', adopt: true },
      { verdict: 'create' },
    ],
    [
      'updates our own object',
      present(ours),
      { ownerUid: 'uid-ours', adopt: true },
      { verdict: 'update', adopt: false },
    ],
    [
      'adopts an object without owner',
      present(),
      { ownerUid: 'uid-ours', adopt: true },
      { verdict: 'update', adopt: true },
    ],
    [
      'adopts an object with an empty owner',
      present({ 'kubectl.kubernetes.io/apply-owner': '' }),
      { ownerUid: 'u', adopt: true },
      { verdict: 'update', adopt: true },
    ],
    [
      'refuses to adopt when adoption is off',
      present(),
      { ownerUid: 'uid-ours', adopt: false },
      { verdict: 'conflict', reason: 'adoption-disabled' },
    ],
    [
      'refuses an object of another set',
      present(theirs),
      { ownerUid: 'uid-ours', adopt: true },
      { verdict: 'conflict', reason: 'owned-by-other', owner: 'uid-theirs' },
    ],
    [
      'refuses an owned object before our parent exists',
      present(theirs),
      { ownerUid: undefined, adopt: true },
      { verdict: 'conflict', reason: 'owned-by-other', owner: 'uid-theirs' },
    ],
    [
      'does not write after a failed read',
      { status: 'unknown', error: failure },
      { ownerUid: 'uid-ours', adopt: true },
      { verdict: 'unknown', error: failure },
    ],
  ])('%s', (_name, live, policy, expected) => {
    expect(mayApply(live, policy)).toEqual(expected);
  });
});

describe('mayPrune', () => {
  const base = { inOld: true, inNew: false, ownerUid: 'uid-ours' as string | undefined };
  it.each<[string, Partial<typeof base> & { live: LiveState }, PruneVerdict]>([
    ['deletes our object that left the set', { live: present(ours) }, { verdict: 'delete' }],
    [
      'keeps an object still in the set',
      { inNew: true, live: present(ours) },
      { verdict: 'skip', reason: 'still-desired' },
    ],
    [
      'keeps an object never in the inventory',
      { inOld: false, live: present(ours) },
      { verdict: 'skip', reason: 'not-in-inventory' },
    ],
    [
      'keeps an object of another set',
      { live: present(theirs) },
      { verdict: 'skip', reason: 'owned-by-other', owner: 'uid-theirs' },
    ],
    [
      'keeps an object whose owner annotation was removed',
      { live: present() },
      { verdict: 'skip', reason: 'not-owned' },
    ],
    [
      'keeps everything when our uid is unknown',
      { ownerUid: undefined, live: present(ours) },
      { verdict: 'skip', reason: 'owned-by-other', owner: 'uid-ours' },
    ],
    [
      'keeps an object annotated prune: disabled',
      { live: present({ ...ours, 'applyset.dev/prune': 'disabled' }) },
      { verdict: 'skip', reason: 'prune-disabled' },
    ],
    [
      'reads prune: Disabled forgivingly',
      { live: present({ ...ours, 'applyset.dev/prune': ' Disabled ' }) },
      { verdict: 'skip', reason: 'prune-disabled' },
    ],
    [
      'prunes when the prune annotation says something else',
      { live: present({ ...ours, 'applyset.dev/prune': 'enabled' }) },
      { verdict: 'delete' },
    ],
    [
      'has nothing to delete when absent',
      { live: { status: 'absent' } },
      { verdict: 'skip', reason: 'already-absent' },
    ],
    [
      'never deletes after a failed read',
      { live: { status: 'unknown', error: failure } },
      { verdict: 'skip', reason: 'unknown-read', error: failure },
    ],
  ])('%s', (_name, input, expected) => {
    expect(mayPrune({ ...base, ...input })).toEqual(expected);
  });
});
