import { ParentChangedError } from '../../src/apply/parent-changed-error.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
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

// A caller that has just GOT the parent (the controller's reconcile reads its ApplySet first) hands
// it to the engine as `parent.live`, which then plans on it without a GET of its own.

describe('a parent the caller already read', () => {
  it('is planned on without a GET: its inventory prunes what left the set', async () => {
    const ns = uniqueName('known-parent');
    await createNamespace(adminKubeConfig(), ns);
    const parent = { namespace: ns, name: 'set-k' };
    const parentPath = `/api/v1/namespaces/${ns}/configmaps/set-k`;
    const { client, sent } = recordingClient();
    const engine = engineFor(client);
    const both = await writeSetDirectory({
      'a.yaml': configMapYaml(ns, 'app-a', { k: 'v' }),
      'b.yaml': configMapYaml(ns, 'app-b', { k: 'v' }),
    });
    expect((await engine(await requestFor(both, parent))).completed).toBe(true);

    const live = (await getObject(parentPath)) as JsonObject;
    sent.length = 0;
    const onlyA = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'app-a', { k: 'v' }) });
    const request = await requestFor(onlyA, parent);
    const result = await engine({
      ...request,
      input: { ...request.input, parent: { ...request.input.parent, live } },
    });

    expect(result.completed).toBe(true);
    expect(result.outcomes.find((o) => o.ref.name === 'app-b')?.action).toBe('pruned');
    expect(sent.filter((r) => r.method === 'GET' && r.path === parentPath)).toEqual([]);
    expect(sent.filter((r) => r.method === 'PATCH' && r.path === parentPath).length).toBeGreaterThan(0);
  });

  it('written by someone else since it was read: the first write of it is refused, nothing merged over', async () => {
    const ns = uniqueName('stale-parent');
    await createNamespace(adminKubeConfig(), ns);
    const parent = { namespace: ns, name: 'set-s' };
    const engine = engineFor(recordingClient().client);
    const one = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'app-a', { k: 'v' }) });
    expect((await engine(await requestFor(one, parent))).completed).toBe(true);

    const live = (await getObject(`/api/v1/namespaces/${ns}/configmaps/set-s`)) as JsonObject;
    await kubectl(['annotate', 'configmap', 'set-s', '-n', ns, 'someone/else=wrote']);
    const two = await writeSetDirectory({
      'a.yaml': configMapYaml(ns, 'app-a', { k: 'v' }),
      'b.yaml': configMapYaml(ns, 'app-b', { k: 'v' }),
    });
    const request = await requestFor(two, parent);
    await expect(
      engine({ ...request, input: { ...request.input, parent: { ...request.input.parent, live } } }),
    ).rejects.toBeInstanceOf(ParentChangedError);
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/app-b`)).toBeUndefined();
  });
});
