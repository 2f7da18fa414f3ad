import type { JsonObject } from '../../src/manifests/json-value.js';
import type { ObjectRef } from '../../src/manifests/object-ref.js';
import {
  describeObjectsOfOthers,
  objectsOfOthers,
  type ListedObject,
  type PruningSet,
} from '../../src/plan/objects-of-others.js';

const OURS = 'uid-parent-a';
const OWNER = 'kubectl.kubernetes.io/apply-owner';
const NS = 'shared';

function ref(kind: string, name: string, group = '', namespace = NS): ObjectRef {
  return { group, kind, namespace, name };
}

function listed(r: ObjectRef, uid: string, metadata: JsonObject = {}, extra: JsonObject = {}): ListedObject {
  return {
    ref: r,
    object: { ...extra, metadata: { name: r.name, namespace: r.namespace, uid, ...metadata } },
  };
}

function set(pruning: { ref: ObjectRef; uid?: string }[] = []): PruningSet {
  return { ownerUid: OURS, pruning: pruning.map((p) => ({ ref: p.ref, uid: p.uid })) };
}

describe('objectsOfOthers', () => {
  it('counts an object of another set and an unowned object, sorted', () => {
    const secret = ref('Secret', 'b-secret');
    const account = ref('ServiceAccount', 'loner');
    const result = objectsOfOthers(
      [listed(account, 'u2'), listed(secret, 'u1', { annotations: { [OWNER]: 'uid-parent-b' } })],
      set(),
    );
    expect(result).toEqual([secret, account]);
  });

  it('does not count the set’s own objects deleted in this run, matched by uid', () => {
    const mine = ref('ConfigMap', 'a-config');
    expect(
      objectsOfOthers(
        [listed(mine, 'u1', { annotations: { [OWNER]: OURS } })],
        set([{ ref: mine, uid: 'u1' }]),
      ),
    ).toEqual([]);
  });

  it('counts an object recreated under a pruned name by someone else (another uid)', () => {
    const mine = ref('ConfigMap', 'a-config');
    expect(objectsOfOthers([listed(mine, 'u-new')], set([{ ref: mine, uid: 'u-old' }]))).toEqual([mine]);
  });

  it('counts an object of the set that this run does not delete (not recorded in its inventory)', () => {
    const stray = ref('ConfigMap', 'stray');
    expect(objectsOfOthers([listed(stray, 'u1', { annotations: { [OWNER]: OURS } })], set())).toEqual([
      stray,
    ]);
  });

  it('does not count what the garbage collector deletes with pruned objects, through several owners', () => {
    const deployment = ref('Deployment', 'web', 'apps');
    const replicaSet = ref('ReplicaSet', 'web-1', 'apps');
    const pod = ref('Pod', 'web-1-x');
    const owned = (uid: string) => ({ ownerReferences: [{ uid, kind: 'X', name: 'x', apiVersion: 'v1' }] });
    const result = objectsOfOthers(
      [listed(pod, 'u-pod', owned('u-rs')), listed(replicaSet, 'u-rs', owned('u-dep'))],
      set([{ ref: deployment, uid: 'u-dep' }]),
    );
    expect(result).toEqual([]);
  });

  it('counts an object with an owner of someone else besides the pruned one (the collector keeps it)', () => {
    const shared = ref('ConfigMap', 'shared');
    const owners = { ownerReferences: [{ uid: 'u-dep' }, { uid: 'u-other' }] };
    expect(
      objectsOfOthers(
        [listed(shared, 'u1', owners)],
        set([{ ref: ref('Deployment', 'web', 'apps'), uid: 'u-dep' }]),
      ),
    ).toEqual([shared]);
  });

  it('does not count the control plane’s defaults, nor Events or PodMetrics, nor objects already being deleted', () => {
    const result = objectsOfOthers(
      [
        listed(ref('ServiceAccount', 'default'), 'u1'),
        listed(ref('ConfigMap', 'kube-root-ca.crt'), 'u2'),
        listed(
          ref('Secret', 'default-token-abcde'),
          'u3',
          { annotations: { 'kubernetes.io/service-account.name': 'default' } },
          { type: 'kubernetes.io/service-account-token' },
        ),
        listed(ref('Event', 'web.1'), 'u4'),
        listed(ref('Event', 'web.1', 'events.k8s.io'), 'u4'),
        listed(ref('PodMetrics', 'web-1-x', 'metrics.k8s.io'), 'u6'),
        listed(ref('ConfigMap', 'going'), 'u5', { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      ],
      set(),
    );
    expect(result).toEqual([]);
  });

  it('counts a default someone applied over, and counts a Lease', () => {
    const account = ref('ServiceAccount', 'default');
    const lease = ref('Lease', 'leader', 'coordination.k8s.io');
    const result = objectsOfOthers(
      [
        listed(account, 'u1', { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } }),
        listed(lease, 'u2'),
      ],
      set(),
    );
    expect(result).toEqual([account, lease]);
  });

  it('does not count the token Secret of a pruned ServiceAccount, nor the Endpoints of a pruned Service', () => {
    const account = ref('ServiceAccount', 'web');
    const service = ref('Service', 'web');
    const result = objectsOfOthers(
      [
        listed(
          ref('Secret', 'web-token-x'),
          'u1',
          { annotations: { 'kubernetes.io/service-account.uid': 'u-sa' } },
          { type: 'kubernetes.io/service-account-token' },
        ),
        listed(ref('Endpoints', 'web'), 'u2'),
      ],
      set([
        { ref: account, uid: 'u-sa' },
        { ref: service, uid: 'u-svc' },
      ]),
    );
    expect(result).toEqual([]);
  });

  it('reports an object listed under two groups once', () => {
    const old = ref('Ingress', 'web', 'extensions');
    const current = ref('Ingress', 'web', 'networking.k8s.io');
    expect(objectsOfOthers([listed(current, 'u1'), listed(old, 'u1')], set())).toHaveLength(1);
  });

  it('does not change its inputs', () => {
    const input = [listed(ref('Secret', 'x'), 'u1')];
    const snapshot = JSON.stringify(input);
    objectsOfOthers(input, set());
    expect(JSON.stringify(input)).toBe(snapshot);
  });
});

describe('describeObjectsOfOthers', () => {
  it('names a few, without the namespace that holds them', () => {
    expect(describeObjectsOfOthers([ref('Secret', 'x'), ref('ServiceAccount', 'y')], NS)).toBe(
      'holds 2 objects of others, e.g. secret/x, serviceaccount/y',
    );
    expect(describeObjectsOfOthers([ref('Gizmo', 'g', 'example.test', 'team')], '')).toBe(
      'holds 1 object of others, e.g. gizmo.example.test/g -n team',
    );
    const many = ['a', 'b', 'c', 'd'].map((name) => ref('Secret', name));
    expect(describeObjectsOfOthers(many, NS)).toBe(
      'holds 4 objects of others, e.g. secret/a, secret/b, secret/c, …',
    );
  });
});
