import type { JsonObject } from '../../src/manifests/json-value.js';
import type { ManifestObject } from '../../src/manifests/manifest-object.js';
import { objectRefKey, type ObjectRef } from '../../src/manifests/object-ref.js';
import type { LiveState } from '../../src/inventory/live-state.js';
import { buildPlan, type PlanInput, type PlanPolicy } from '../../src/plan/build-plan.js';
import { narrowedInventory } from '../../src/plan/narrowed-inventory.js';
import type { Plan, PlanStep, PruneAction } from '../../src/plan/plan.js';

const OURS = 'uid-ours';

function ref(kind: string, name: string, namespace = 'default', group = ''): ObjectRef {
  return { group, kind, namespace, name };
}

function desired(r: ObjectRef): ManifestObject {
  const apiVersion = r.group === '' ? 'v1' : `${r.group}/v1`;
  const metadata: JsonObject =
    r.namespace === '' ? { name: r.name } : { name: r.name, namespace: r.namespace };
  return {
    ref: r,
    apiVersion,
    version: 'v1',
    scope: r.namespace === '' ? 'Cluster' : 'Namespaced',
    manifest: { apiVersion, kind: r.kind, metadata },
    source: { file: 'set.yaml', documentIndex: 0 },
  };
}

function liveObject(
  r: ObjectRef,
  annotations: Record<string, string> = { 'kubectl.kubernetes.io/apply-owner': OURS },
  spec?: JsonObject,
): LiveState {
  const object: JsonObject = {
    kind: r.kind,
    metadata: { name: r.name, namespace: r.namespace, annotations },
  };
  return { status: 'present', object: spec === undefined ? object : { ...object, spec } };
}

const policy: PlanPolicy = { ownerUid: OURS, adopt: true, prune: true, allowEmpty: false };

function plan(input: Partial<PlanInput> & { live?: Map<string, LiveState> }): Plan {
  const result = buildPlan({ desired: [], inventoryOld: [], live: new Map(), policy, ...input });
  if (!result.ok) throw new Error(result.refusals.map((r) => r.message).join('; '));
  return result.plan;
}

function liveMap(entries: [ObjectRef, LiveState][]): Map<string, LiveState> {
  return new Map(entries.map(([r, state]) => [objectRefKey(r), state]));
}

/** The plan in one line per step, for readable expectations. */
function outline(p: Plan): string[] {
  const name = (r: ObjectRef) => `${r.kind}/${r.name}`;
  return p.steps.map((step: PlanStep) => {
    switch (step.type) {
      case 'widen-inventory':
        return `widen ${step.inventory.map(name).join(',')}`;
      case 'apply-wave':
        return `apply ${step.wave}: ${step.actions.map((a) => `${a.type} ${name(a.ref)}`).join(', ')}`;
      case 'wait-for-crds':
        return `wait ${step.crds.map(name).join(',')}`;
      case 'wait-for-sync-wave':
        return `healthy wave ${step.wave} (then ${step.next}): ${step.refs.map(name).join(',')}`;
      case 'prune-wave':
        return `prune ${step.wave}: ${step.actions
          .map((a: PruneAction) =>
            a.type === 'delete' ? `delete ${name(a.ref)}` : `skip ${name(a.ref)} (${a.reason})`,
          )
          .join(', ')}`;
      case 'narrow-inventory':
        return `narrow keep ${step.keep.map(name).join(',')} deleting ${step.deleting.map(name).join(',')}`;
      case 'write-hash':
        return 'hash';
    }
  });
}

describe('buildPlan', () => {
  const foo = ref('ConfigMap', 'foo');
  const bar = ref('ConfigMap', 'bar');
  const baz = ref('ConfigMap', 'baz');

  it("plans the proposal's example: foo, bar → foo, baz prunes bar, creates baz, updates foo", () => {
    const p = plan({
      desired: [desired(foo), desired(baz)],
      inventoryOld: [foo, bar],
      live: liveMap([
        [foo, liveObject(foo)],
        [bar, liveObject(bar)],
        [baz, { status: 'absent' }],
      ]),
    });
    expect(outline(p)).toEqual([
      'widen ConfigMap/bar,ConfigMap/baz,ConfigMap/foo',
      'apply dependencies: update ConfigMap/foo, create ConfigMap/baz',
      'prune dependencies: delete ConfigMap/bar',
      'narrow keep ConfigMap/baz,ConfigMap/foo deleting ConfigMap/bar',
      'hash',
    ]);
    expect(p.inventoryNew).toEqual([baz, foo]);
  });

  it('first apply: the old inventory is empty and the parent does not exist yet', () => {
    const p = plan({
      desired: [desired(foo), desired(bar)],
      live: liveMap([
        [foo, { status: 'absent' }],
        [bar, { status: 'absent' }],
      ]),
      policy: { ...policy, ownerUid: undefined },
    });
    expect(outline(p)).toEqual([
      'widen ConfigMap/bar,ConfigMap/foo',
      'apply dependencies: create ConfigMap/foo, create ConfigMap/bar',
      'narrow keep ConfigMap/bar,ConfigMap/foo deleting ',
      'hash',
    ]);
  });

  it('orders waves for apply and reverses them for prune, waiting for the CRDs it applies', () => {
    const ns = ref('Namespace', 'shop', '');
    const crd = ref('CustomResourceDefinition', 'widgets.example.com', '', 'apiextensions.k8s.io');
    const widget = ref('Widget', 'w', 'shop', 'example.com');
    const web = ref('Deployment', 'web', 'shop', 'apps');
    const binding = ref('RoleBinding', 'rb', 'shop', 'rbac.authorization.k8s.io');
    const role = ref('Role', 'r', 'shop', 'rbac.authorization.k8s.io');
    const all = [widget, web, binding, role, crd, ns];
    const up = plan({
      desired: all.map(desired),
      live: liveMap(all.map((r) => [r, { status: 'absent' }])),
    });
    expect(outline(up).slice(1, -2)).toEqual([
      'apply foundation: create CustomResourceDefinition/widgets.example.com, create Namespace/shop',
      'wait CustomResourceDefinition/widgets.example.com',
      'apply dependencies: create Role/r',
      'apply bindings: create RoleBinding/rb',
      'apply workloads: create Deployment/web',
      'apply rest: create Widget/w',
    ]);
    const down = plan({
      desired: [],
      inventoryOld: all,
      live: liveMap(all.map((r) => [r, liveObject(r)])),
      policy: { ...policy, allowEmpty: true },
    });
    expect(outline(down).slice(1, -2)).toEqual([
      'prune rest: delete Widget/w',
      'prune workloads: delete Deployment/web',
      'prune bindings: delete RoleBinding/rb',
      'prune dependencies: delete Role/r',
      'prune crds: delete CustomResourceDefinition/widgets.example.com',
      'prune namespaces: delete Namespace/shop',
    ]);
  });

  it('applies sync waves in order, each awaited healthy, and prunes them in reverse', () => {
    const waved = (r: ObjectRef, wave: string, annotation = 'applyset.dev/wave'): ManifestObject => {
      const object = desired(r);
      const metadata = {
        ...(object.manifest['metadata'] as JsonObject),
        annotations: { [annotation]: wave },
      };
      return { ...object, manifest: { ...object.manifest, metadata } };
    };
    const migrate = ref('Job', 'migrate', 'default', 'batch');
    const web = ref('Deployment', 'web', 'default', 'apps');
    const config = ref('ConfigMap', 'config');
    const oldFirst = ref('ConfigMap', 'old-first');
    const oldLast = ref('Service', 'old-last');
    const input = {
      desired: [waved(web, '1'), waved(migrate, '-1', 'argocd.argoproj.io/sync-wave'), desired(config)],
      inventoryOld: [oldFirst, oldLast],
      live: liveMap([
        [migrate, { status: 'absent' }],
        [web, { status: 'absent' }],
        [config, { status: 'absent' }],
        [
          oldFirst,
          liveObject(oldFirst, { 'kubectl.kubernetes.io/apply-owner': OURS, 'applyset.dev/wave': '-1' }),
        ],
        [
          oldLast,
          liveObject(oldLast, { 'kubectl.kubernetes.io/apply-owner': OURS, 'applyset.dev/wave': '2' }),
        ],
      ]),
    };
    expect(outline(plan({ ...input, policy: { ...policy, syncWaves: true } })).slice(1, -2)).toEqual([
      'apply workloads: create Job/migrate',
      'healthy wave -1 (then 0): Job/migrate',
      'apply dependencies: create ConfigMap/config',
      'healthy wave 0 (then 1): ConfigMap/config',
      'apply workloads: create Deployment/web',
      'prune dependencies: delete Service/old-last',
      'prune dependencies: delete ConfigMap/old-first',
    ]);
    // Without sync waves (the CLI, as kubectl): the annotation means nothing.
    expect(outline(plan(input)).slice(1, -2)).toEqual([
      'apply dependencies: create ConfigMap/config',
      'apply workloads: create Deployment/web, create Job/migrate',
      'prune dependencies: delete ConfigMap/old-first, delete Service/old-last',
    ]);
  });

  it('never changes an object of another set: a conflict, outside the inventory', () => {
    const p = plan({
      desired: [desired(foo)],
      live: liveMap([[foo, liveObject(foo, { 'kubectl.kubernetes.io/apply-owner': 'uid-theirs' })]]),
    });
    const wave = p.steps[1];
    expect(wave).toMatchObject({
      type: 'apply-wave',
      actions: [{ type: 'conflict', reason: 'owned-by-other', owner: 'uid-theirs' }],
    });
    expect(p.inventoryNew).toEqual([]);
  });

  it('adopts an unowned object unless adoption is disabled', () => {
    const live = liveMap([[foo, liveObject(foo, {})]]);
    expect(plan({ desired: [desired(foo)], live }).steps[1]).toMatchObject({
      actions: [{ type: 'update', adopt: true }],
    });
    expect(
      plan({ desired: [desired(foo)], live, policy: { ...policy, adopt: false } }).steps[1],
    ).toMatchObject({
      actions: [{ type: 'conflict', reason: 'adoption-disabled' }],
    });
  });

  it('writes nothing to a desired object whose read failed, and keeps it tracked', () => {
    const p = plan({ desired: [desired(foo)], live: new Map() });
    expect(p.steps[1]).toMatchObject({ actions: [{ type: 'unknown-read', ref: foo }] });
    expect(p.inventoryNew).toEqual([foo]);
  });

  const skipCases: [string, LiveState | undefined, string, boolean][] = [
    [
      'owned by another set',
      liveObject(bar, { 'kubectl.kubernetes.io/apply-owner': 'uid-theirs' }),
      'owned-by-other',
      false,
    ],
    ['without owner any more', liveObject(bar, {}), 'not-owned', false],
    [
      'annotated prune: disabled',
      liveObject(bar, { 'kubectl.kubernetes.io/apply-owner': OURS, 'applyset.dev/prune': 'disabled' }),
      'prune-disabled',
      true,
    ],
    ['whose read failed', { status: 'unknown', error: new Error('timeout') }, 'unknown-read', true],
    ['never read', undefined, 'unknown-read', true],
    ['already gone', { status: 'absent' }, 'already-absent', false],
  ];
  it.each(skipCases)(
    'does not prune an object %s (reason %s; stays tracked: %s)',
    (_name, live, reason, tracked) => {
      const p = plan({
        desired: [desired(foo)],
        inventoryOld: [foo, bar],
        live: liveMap([
          [foo, liveObject(foo)],
          ...(live === undefined ? [] : [[bar, live] as [ObjectRef, LiveState]]),
        ]),
      });
      expect(p.steps.find((s) => s.type === 'prune-wave')).toMatchObject({
        actions: [{ type: 'skip', ref: bar, reason }],
      });
      const narrow = p.steps.find((s) => s.type === 'narrow-inventory');
      expect(narrow).toMatchObject({ keep: tracked ? [bar, foo] : [foo], deleting: [] });
    },
  );

  it('keeps a Namespace while objects that stay in the set live in it', () => {
    const ns = ref('Namespace', 'shop', '');
    const stays = ref('ConfigMap', 'settings', 'shop');
    const p = plan({
      desired: [desired(stays)],
      inventoryOld: [ns, stays],
      live: liveMap([
        [ns, liveObject(ns)],
        [stays, liveObject(stays)],
      ]),
    });
    expect(p.steps.find((s) => s.type === 'prune-wave')).toEqual({
      type: 'prune-wave',
      wave: 'namespaces',
      actions: [{ type: 'skip', ref: ns, reason: 'namespace-still-used', usedBy: [stays] }],
    });
    expect(p.steps.find((s) => s.type === 'narrow-inventory')).toMatchObject({ keep: [ns, stays] });
  });

  it('keeps a Namespace holding a recorded object kept from prune, or another object it is told of', () => {
    const ns = ref('Namespace', 'shop', '');
    const kept = ref('ConfigMap', 'keep-me', 'shop');
    const p = plan({
      inventoryOld: [ns, kept],
      desired: [desired(foo)],
      live: liveMap([
        [foo, { status: 'absent' }],
        [ns, liveObject(ns)],
        [
          kept,
          liveObject(kept, { 'kubectl.kubernetes.io/apply-owner': OURS, 'applyset.dev/prune': 'disabled' }),
        ],
      ]),
    });
    expect(
      p.steps
        .filter((s) => s.type === 'prune-wave')
        .map((s) => s.type === 'prune-wave' && s.actions[0]?.type === 'skip' && s.actions[0].reason),
    ).toEqual(['prune-disabled', 'namespace-still-used']);

    const foreign = ref('Secret', 'theirs', 'shop');
    const withForeign = plan({
      inventoryOld: [ns],
      desired: [desired(foo)],
      live: liveMap([
        [foo, { status: 'absent' }],
        [ns, liveObject(ns)],
      ]),
      liveNamespaceMembers: new Map([['shop', [foreign]]]),
    });
    expect(withForeign.steps.find((s) => s.type === 'prune-wave')).toMatchObject({
      actions: [{ type: 'skip', reason: 'namespace-still-used', usedBy: [foreign] }],
    });
  });

  it('deletes a Namespace whose recorded objects are all deleted or gone', () => {
    const ns = ref('Namespace', 'shop', '');
    const gone = ref('ConfigMap', 'a', 'shop');
    const going = ref('ConfigMap', 'b', 'shop');
    const p = plan({
      inventoryOld: [ns, gone, going],
      desired: [desired(foo)],
      live: liveMap([
        [foo, liveObject(foo)],
        [ns, liveObject(ns)],
        [gone, { status: 'absent' }],
        [going, liveObject(going)],
      ]),
    });
    expect(outline(p).filter((line) => line.startsWith('prune'))).toEqual([
      'prune dependencies: skip ConfigMap/a (already-absent), delete ConfigMap/b',
      'prune namespaces: delete Namespace/shop',
    ]);
  });

  it('keeps a CRD while custom resources of it stay', () => {
    const crd = ref('CustomResourceDefinition', 'widgets.example.com', '', 'apiextensions.k8s.io');
    const widget = ref('Widget', 'w', 'default', 'example.com');
    const crdLive = liveObject(
      crd,
      { 'kubectl.kubernetes.io/apply-owner': OURS },
      { group: 'example.com', names: { kind: 'Widget' } },
    );
    const p = plan({
      desired: [desired(widget)],
      inventoryOld: [crd, widget],
      live: liveMap([
        [crd, crdLive],
        [widget, liveObject(widget)],
      ]),
    });
    expect(p.steps.find((s) => s.type === 'prune-wave')).toMatchObject({
      wave: 'crds',
      actions: [{ type: 'skip', reason: 'crd-still-used', usedBy: [widget] }],
    });
    // Another kind of the same group does not hold the CRD.
    const gadget = ref('Gadget', 'g', 'default', 'example.com');
    const other = plan({
      desired: [desired(gadget)],
      inventoryOld: [crd],
      live: liveMap([
        [crd, crdLive],
        [gadget, liveObject(gadget)],
      ]),
    });
    expect(other.steps.find((s) => s.type === 'prune-wave')).toMatchObject({ actions: [{ type: 'delete' }] });
  });

  it('refuses an empty set over a non-empty inventory unless allowed', () => {
    const input = { desired: [], inventoryOld: [foo], live: liveMap([[foo, liveObject(foo)]]), policy };
    expect(buildPlan(input)).toEqual({
      ok: false,
      refusals: [{ code: 'empty-set', message: expect.stringContaining('--allow-empty') }],
    });
    expect(buildPlan({ ...input, policy: { ...policy, allowEmpty: true } }).ok).toBe(true);
    expect(buildPlan({ ...input, policy: { ...policy, prune: false } }).ok).toBe(true);
    expect(buildPlan({ ...input, inventoryOld: [] }).ok).toBe(true);
  });

  it('refuses a set containing its own apply-config object', () => {
    const parent = ref('ConfigMap', 'my-set', 'ops');
    const result = buildPlan({
      desired: [desired(parent)],
      inventoryOld: [],
      live: new Map(),
      policy: { ...policy, parent },
    });
    expect(result).toMatchObject({ ok: false, refusals: [{ code: 'parent-in-set' }] });
  });

  it('without prune, deletes nothing and keeps old ∪ new', () => {
    const p = plan({
      desired: [desired(foo)],
      inventoryOld: [bar],
      live: liveMap([
        [foo, liveObject(foo)],
        [bar, liveObject(bar)],
      ]),
      policy: { ...policy, prune: false },
    });
    expect(outline(p)).toEqual([
      'widen ConfigMap/bar,ConfigMap/foo',
      'apply dependencies: update ConfigMap/foo',
      'narrow keep ConfigMap/bar,ConfigMap/foo deleting ',
      'hash',
    ]);
  });

  it('does not mutate its inputs', () => {
    const inventoryOld = [foo, bar];
    const objects = [desired(baz), desired(foo)];
    const live = liveMap([
      [foo, liveObject(foo)],
      [bar, liveObject(bar)],
      [baz, { status: 'absent' }],
    ]);
    const snapshot = JSON.stringify({ inventoryOld, objects, live: [...live] });
    plan({ desired: objects, inventoryOld, live });
    expect(JSON.stringify({ inventoryOld, objects, live: [...live] })).toBe(snapshot);
  });
});

describe('narrowedInventory', () => {
  it('keeps every planned deletion that is not confirmed', () => {
    const a = ref('ConfigMap', 'a');
    const b = ref('ConfigMap', 'b');
    const c = ref('ConfigMap', 'c');
    const p = plan({
      desired: [desired(a)],
      inventoryOld: [a, b, c],
      live: liveMap([
        [a, liveObject(a)],
        [b, liveObject(b)],
        [c, liveObject(c)],
      ]),
    });
    const step = p.steps.find((s) => s.type === 'narrow-inventory');
    if (step?.type !== 'narrow-inventory') throw new Error('no narrow step');
    expect(narrowedInventory(step, [b, c])).toEqual([a]);
    expect(narrowedInventory(step, [b])).toEqual([a, c]);
    expect(narrowedInventory(step, [])).toEqual([a, b, c]);
  });

  it('drops a planned deletion the run released instead of deleting', () => {
    const a = ref('ConfigMap', 'a');
    const ns = ref('Namespace', 'shared', '');
    const p = plan({
      desired: [desired(a)],
      inventoryOld: [a, ns],
      live: liveMap([
        [a, liveObject(a)],
        [ns, liveObject(ns)],
      ]),
    });
    const step = p.steps.find((s) => s.type === 'narrow-inventory');
    if (step?.type !== 'narrow-inventory') throw new Error('no narrow step');
    expect(narrowedInventory(step, [], [ns])).toEqual([a]);
    expect(narrowedInventory(step, [])).toEqual([ns, a]);
  });

  it('drops an object of the set the caller says was never written, and only that one', () => {
    const a = ref('ConfigMap', 'a');
    const escape = ref('ConfigMap', 'escape', 'other');
    const gone = ref('ConfigMap', 'gone');
    const p = plan({
      desired: [desired(a), desired(escape)],
      inventoryOld: [a, gone],
      live: liveMap([
        [a, liveObject(a)],
        [gone, liveObject(gone)],
      ]),
    });
    const step = p.steps.find((s) => s.type === 'narrow-inventory');
    if (step?.type !== 'narrow-inventory') throw new Error('no narrow step');
    expect(narrowedInventory(step, [], [], [escape])).toEqual([a, gone]);
    expect(narrowedInventory(step, [gone], [], [escape])).toEqual([a]);
    expect(narrowedInventory(step, [gone])).toEqual([a, escape]);
  });
});
