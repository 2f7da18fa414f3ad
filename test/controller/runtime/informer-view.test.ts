import { createDependentsIndex } from '../../../src/controller/runtime/dependents-index.js';
import { needsReconcile, secretReferenceOf } from '../../../src/controller/runtime/watched-applyset.js';
import {
  informerView,
  informerViewWithInventory,
  isWholeView,
} from '../../../src/controller/runtime/informer-view.js';
import type { JsonObject } from '../../../src/manifests/json-value.js';

/** An ApplySet as the API server sends it after a few reconciles of a set of 2,000 objects. */
function servedApplySet(): JsonObject {
  return {
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: {
      name: 'web',
      namespace: 'team-a',
      generation: 3,
      resourceVersion: '42',
      labels: { 'applyset.kubernetes.io/id': 'applyset-abc-v1' },
      annotations: {
        'applyset.dev/reconcile-requested-at': '2026-11-25T00:00:00Z',
        'applyset.dev/approve-prune': 'x',
        'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{}}',
        'kubectl.kubernetes.io/last-applied-objects': 'team-a::ConfigMap:a\n'.repeat(2000),
        'applyset.kubernetes.io/contains-group-kinds': 'ConfigMap',
        'applyset.kubernetes.io/tooling': 'applyset-controller/v0.1.0',
      },
      managedFields: [{ manager: 'applyset-controller', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
      finalizers: ['applyset.dev/finalizer'],
    },
    spec: {
      source: { url: 'https://git.example/repo.git', secretRef: { name: 'git' } },
      dependsOn: [{ name: 'base' }],
    },
    status: {
      observedGeneration: 3,
      conditions: [{ type: 'Ready', status: 'False', reason: 'FetchFailed', observedGeneration: 3 }],
      inventory: { items: [{ id: 'team-a_a__ConfigMap', v: 'v1' }], totalCount: 2000, truncated: true },
    },
  };
}

/** A set of `objects` ConfigMaps as served, its inventory annotation and status.inventory included. */
function smallApplySet(objects: number): JsonObject {
  const names = Array.from({ length: objects }, (_, index) => `cm-${index}`);
  const served = servedApplySet();
  const metadata = served['metadata'] as JsonObject;
  metadata['annotations'] = {
    'kubectl.kubernetes.io/last-applied-objects': names.map((name) => `team-a::ConfigMap:${name}`).join('\n'),
    'applyset.kubernetes.io/contains-group-kinds': 'ConfigMap',
  };
  served['status'] = {
    observedGeneration: 3,
    inventory: {
      items: names.map((name) => `team-a_${name}__ConfigMap`),
      totalCount: objects,
      truncated: false,
    },
  };
  return served;
}

describe('informerView', () => {
  it('shares the strings of many views without changing a view or the answer it came from', () => {
    const answers = Array.from(
      { length: 3 },
      () => JSON.parse(JSON.stringify(smallApplySet(3))) as JsonObject,
    );
    const views = answers.map((answer) => informerView(answer));
    for (const [index, view] of views.entries()) {
      expect(answers[index]).toEqual(smallApplySet(3));
      expect(view).toEqual({
        ...smallApplySet(3),
        metadata: { ...(smallApplySet(3)['metadata'] as JsonObject), managedFields: undefined },
      });
    }
  });

  it('drops the managed fields, the inventory annotations, kubectl’s copy of the spec and status.inventory', () => {
    const view = informerView(servedApplySet());
    const metadata = view['metadata'] as JsonObject;
    expect(metadata['managedFields']).toBeUndefined();
    expect(Object.keys(metadata['annotations'] as JsonObject).sort()).toEqual([
      'applyset.dev/approve-prune',
      'applyset.dev/reconcile-requested-at',
      'applyset.kubernetes.io/tooling',
    ]);
    expect((view['status'] as JsonObject)['inventory']).toBeUndefined();
    expect(JSON.stringify(view).length).toBeLessThan(JSON.stringify(servedApplySet()).length / 10);
    expect(isWholeView(view)).toBe(false);
  });

  it('keeps a small set whole, but for its managed fields, and marks it so', () => {
    const served = smallApplySet(20);
    const view = informerView(served);
    const { managedFields: _managedFields, ...metadata } = served['metadata'] as JsonObject;
    expect(view).toEqual({ ...served, metadata });
    expect(isWholeView(view)).toBe(true);
    expect(isWholeView(informerViewWithInventory(served))).toBe(true);
    // Whole is judged on each version: the same set grown past the bound is cached without them.
    const grown = informerView(smallApplySet(200));
    expect(isWholeView(grown)).toBe(false);
    expect((grown['status'] as JsonObject)['inventory']).toBeUndefined();
    expect(isWholeView(served)).toBe(false);
  });

  it('keeps what the controller decides on: the same reconciles, wake-ups and Secret as the whole object', () => {
    const served = servedApplySet();
    const view = informerView(served);
    expect(view['spec']).toEqual(served['spec']);
    expect((view['status'] as JsonObject)['conditions']).toEqual(
      (served['status'] as JsonObject)['conditions'],
    );
    expect(secretReferenceOf(view, new Set())).toBeDefined();
    expect(secretReferenceOf(view, new Set())).toEqual(secretReferenceOf(served, new Set()));
    const asked = servedApplySet();
    ((asked['metadata'] as JsonObject)['annotations'] as JsonObject)['applyset.dev/reconcile-requested-at'] =
      'later';
    expect(needsReconcile({ type: 'modified', object: informerView(asked), previous: view })).toBe(true);
    expect(needsReconcile({ type: 'modified', object: view, previous: view })).toBe(false);
    const base: JsonObject = { metadata: { name: 'base', namespace: 'team-a' } };
    const wakes = (dependent: JsonObject) => {
      const index = createDependentsIndex();
      index.dependentsToWake({ type: 'added', object: dependent });
      return index.dependentsToWake({ type: 'added', object: base });
    };
    expect(wakes(view)).toEqual(wakes(served));
    expect(wakes(view)).toEqual(['team-a/web']);
  });

  it('leaves its input as it was', () => {
    const served = servedApplySet();
    informerView(served);
    expect(served).toEqual(servedApplySet());
  });

  it('keeps status.inventory, and only that, for the web view', () => {
    const served = servedApplySet();
    const view = informerViewWithInventory(served);
    expect((view['status'] as JsonObject)['inventory']).toEqual(
      (served['status'] as JsonObject)['inventory'],
    );
    expect({ ...view, status: { ...(view['status'] as JsonObject), inventory: null } }).toEqual({
      ...informerView(served),
      status: { ...(informerView(served)['status'] as JsonObject), inventory: null },
    });
    expect(served).toEqual(servedApplySet());
  });
});
