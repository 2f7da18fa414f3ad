import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
import { readLiveObjects, type ReadTarget } from '../../src/apply/read-live-objects.js';
import { computeApplySetId } from '../../src/inventory/applyset-id.js';
import { createKubeObjectApi } from '../../src/kube/kube-object-api.js';
import type { RestMapping } from '../../src/kube/rest-mapper.js';
import { describeObjectRef } from '../../src/manifests/object-ref.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  configMapYaml,
  engineFor,
  getObject,
  kubectl,
  recordingClient,
  requestFor,
  writeSetDirectory,
} from './apply-test-kit.js';

// Live reads LIST by the set's part-of label and GET only what the LIST did not return, so a run
// costs what the set holds rather than what its namespaces hold; pruning stays as safe as with
// unfiltered LISTs (docs/inventory-protocol.md#6-prune-safety).

const PART_OF = 'applyset.kubernetes.io/part-of';

function byObject(outcomes: readonly ObjectOutcome[]): Record<string, string> {
  return Object.fromEntries(
    outcomes.map((o) => [
      describeObjectRef(o.ref),
      o.action === 'prune-skipped' ? `${o.action}: ${o.reason}` : o.action,
    ]),
  );
}

async function createForeignConfigMaps(namespace: string, count: number): Promise<void> {
  const documents = Array.from({ length: count }, (_, i) =>
    configMapYaml(namespace, `other-${i}`, { i: `${i}` }),
  );
  const dir = await writeSetDirectory({ 'others.yaml': documents.join('---\n') });
  await kubectl(['create', '-f', `${dir}/others.yaml`]);
}

async function freshNamespace(prefix: string): Promise<string> {
  const namespace = uniqueName(prefix);
  await createNamespace(adminKubeConfig(), namespace);
  return namespace;
}

describe('filtered live reads', () => {
  it('adopt an unlabelled object found by GET, and read no member by GET once all carry the label', async () => {
    const ns = await freshNamespace('flr');
    await createForeignConfigMaps(ns, 20);
    await kubectl(['create', 'configmap', 'app-adopt', '-n', ns, '--from-literal=k=old']);
    const files = {
      'a.yaml': configMapYaml(ns, 'app-a', { k: 'v' }),
      'b.yaml': configMapYaml(ns, 'app-b', { k: 'v' }),
      'adopt.yaml': configMapYaml(ns, 'app-adopt', { k: 'v' }),
    };
    const parent = { namespace: ns, name: 'set-f' };
    const { client, sent } = recordingClient();
    const engine = engineFor(client);
    const request = await requestFor(await writeSetDirectory(files), parent);

    const first = await engine(request);
    expect(byObject(first.outcomes)).toEqual({
      [`configmap/app-a -n ${ns}`]: 'created',
      [`configmap/app-b -n ${ns}`]: 'created',
      [`configmap/app-adopt -n ${ns}`]: 'configured',
    });
    expect(first.outcomes.find((o) => o.ref.name === 'app-adopt')).toMatchObject({ adopted: true });
    expect((await getObject(`/api/v1/namespaces/${ns}/configmaps/app-adopt`))?.['data']).toEqual({ k: 'v' });

    sent.length = 0;
    const again = await engine(request);
    expect(new Set(Object.values(byObject(again.outcomes)))).toEqual(new Set(['unchanged']));
    const memberPath = new RegExp(`^/api/v1/namespaces/${ns}/configmaps/app-`);
    expect(sent.filter((r) => memberPath.test(r.path))).toEqual([]);
    expect(sent.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(sent.filter((r) => r.path === `/api/v1/namespaces/${ns}/configmaps`)).toHaveLength(1);
  });

  it('see only the set’s members in a LIST, and everything in a namespace the plan may prune', async () => {
    const ns = await freshNamespace('flr-list');
    await createForeignConfigMaps(ns, 5);
    const parent = { namespace: ns, name: 'set-l' };
    const files = {
      'a.yaml': configMapYaml(ns, 'app-a', { k: 'v' }),
      'b.yaml': configMapYaml(ns, 'app-b', { k: 'v' }),
    };
    const { client } = recordingClient();
    await engineFor(client)(await requestFor(await writeSetDirectory(files), parent));

    const api = createKubeObjectApi(client);
    const mapping: RestMapping = {
      group: '',
      version: 'v1',
      resource: 'configmaps',
      kind: 'ConfigMap',
      scope: 'Namespaced',
    };
    const targets: ReadTarget[] = ['app-a', 'app-b', 'missing'].map((name) => ({
      ref: { group: '', kind: 'ConfigMap', namespace: ns, name },
      mapping,
    }));
    const labelSelector = `${PART_OF}=${computeApplySetId({ ...parent, kind: 'ConfigMap', group: '' })}`;
    const filtered = await readLiveObjects(api, targets, {
      concurrency: 4,
      filter: { labelSelector, unfilteredNamespaces: new Set() },
    });
    expect((filtered.namespaceMembers.get(ns) ?? []).map((ref) => ref.name).sort()).toEqual([
      'app-a',
      'app-b',
    ]);
    expect([...filtered.live.entries()].map(([key, state]) => [key, state.status]).sort()).toEqual([
      [`${ns}::ConfigMap:app-a`, 'present'],
      [`${ns}::ConfigMap:app-b`, 'present'],
      [`${ns}::ConfigMap:missing`, 'absent'],
    ]);

    const unfiltered = await readLiveObjects(api, targets, {
      concurrency: 4,
      filter: { labelSelector, unfilteredNamespaces: new Set([ns]) },
    });
    // The set's two, the five others and the parent ConfigMap itself.
    expect((unfiltered.namespaceMembers.get(ns) ?? []).map((ref) => ref.name).sort()).toEqual([
      'app-a',
      'app-b',
      ...['other-0', 'other-1', 'other-2', 'other-3', 'other-4'],
      'set-l',
    ]);
    expect(unfiltered.live.get(`${ns}::ConfigMap:missing`)?.status).toBe('absent');
  });

  it('prune an inventory member whose part-of label was removed, as before', async () => {
    const ns = await freshNamespace('flr-prune');
    const parent = { namespace: ns, name: 'set-p' };
    const cm = (name: string) => configMapYaml(ns, name, { k: 'v' });
    const { client } = recordingClient();
    const engine = engineFor(client);
    await engine(
      await requestFor(
        await writeSetDirectory({ 'a.yaml': cm('a'), 'b.yaml': cm('b'), 'c.yaml': cm('c') }),
        parent,
      ),
    );
    await kubectl(['label', 'configmap', 'c', '-n', ns, `${PART_OF}-`]);

    const result = await engine(
      await requestFor(await writeSetDirectory({ 'a.yaml': cm('a'), 'b.yaml': cm('b') }), parent),
    );
    expect(byObject(result.outcomes)[`configmap/c -n ${ns}`]).toBe('pruned');
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/c`)).toBeUndefined();
  });

  it('keep a Namespace leaving the set while others’ objects of the set’s kinds are in it, as before', async () => {
    const parentNamespace = await freshNamespace('flr-parent');
    const ns = uniqueName('flr-held');
    const parent = { namespace: parentNamespace, name: 'set-n' };
    const keep = configMapYaml(parentNamespace, 'keep', { k: 'v' });
    const { client } = recordingClient();
    const engine = engineFor(client);
    await engine(
      await requestFor(
        await writeSetDirectory({
          'ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`,
          'x.yaml': configMapYaml(ns, 'cm-x', { k: 'v' }),
          'y.yaml': configMapYaml(ns, 'cm-y', { k: 'v' }),
          'keep.yaml': keep,
        }),
        parent,
      ),
    );
    await kubectl(['create', 'configmap', 'foreign', '-n', ns, '--from-literal=k=v']);

    const result = await engine(await requestFor(await writeSetDirectory({ 'keep.yaml': keep }), parent));
    const outcomes = byObject(result.outcomes);
    expect(outcomes[`configmap/cm-x -n ${ns}`]).toBe('pruned');
    expect(outcomes[`namespace/${ns}`]).toBe(
      `prune-skipped: kept: objects that stay live in it (configmap/foreign -n ${ns})`,
    );
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/foreign`)).toBeDefined();
  });
});
