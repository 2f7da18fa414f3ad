import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
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

// Issue #39: an object new to the set is created by a POST without a read before it; the server
// refuses the POST when the object exists, and the run then reads it and judges it as kubectl judges
// what its GET found: adopted when nobody owns it, a conflict (and out of the inventory) when another
// set does.

const byObject = (outcomes: readonly ObjectOutcome[]) =>
  Object.fromEntries(outcomes.map((o) => [describeObjectRef(o.ref), o.action]));

const inventoryOf = async (ns: string, name: string) =>
  (await getObject(`/api/v1/namespaces/${ns}/configmaps/${name}`))?.['metadata'] as
    | { annotations?: Record<string, string> }
    | undefined;

describe('objects new to the set', () => {
  it('are created without a read; an existing one is read after the refused create and judged', async () => {
    const ns = uniqueName('unread');
    await createNamespace(adminKubeConfig(), ns);
    await kubectl(['create', 'configmap', 'loose', '-n', ns, '--from-literal=k=old']);
    const { client, sent } = recordingClient();
    const engine = engineFor(client);
    // Another set holds `taken`.
    await engine(
      await requestFor(await writeSetDirectory({ 't.yaml': configMapYaml(ns, 'taken', { k: 'other' }) }), {
        namespace: ns,
        name: 'other-set',
      }),
    );

    // The set exists already (its parent written by a first run): only then are new objects created unread.
    const seed = { 'seed.yaml': configMapYaml(ns, 'seed', { k: 'v' }) };
    await engine(await requestFor(await writeSetDirectory(seed), { namespace: ns, name: 'mine' }));

    sent.length = 0;
    const files = {
      ...seed,
      'fresh.yaml': configMapYaml(ns, 'fresh', { k: 'v' }),
      'loose.yaml': configMapYaml(ns, 'loose', { k: 'v' }),
      'taken.yaml': configMapYaml(ns, 'taken', { k: 'mine' }),
    };
    const result = await engine(
      await requestFor(await writeSetDirectory(files), { namespace: ns, name: 'mine' }),
    );

    expect(byObject(result.outcomes)).toEqual({
      [`configmap/seed -n ${ns}`]: 'unchanged',
      [`configmap/fresh -n ${ns}`]: 'created',
      [`configmap/loose -n ${ns}`]: 'configured',
      [`configmap/taken -n ${ns}`]: 'conflict',
    });
    // What kubectl apply leaves: the loose one taken over, the other set's untouched.
    expect((await getObject(`/api/v1/namespaces/${ns}/configmaps/loose`))?.['data']).toEqual({ k: 'v' });
    expect((await getObject(`/api/v1/namespaces/${ns}/configmaps/taken`))?.['data']).toEqual({ k: 'other' });
    // The fresh one was never read; the two that existed, once each after their refused create.
    const member = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    expect(sent.filter((r) => r.method === 'GET' && r.path === member('fresh'))).toEqual([]);
    expect(sent.filter((r) => r.method === 'GET' && r.path === member('loose'))).toHaveLength(1);
    expect(sent.filter((r) => r.method === 'GET' && r.path === member('taken'))).toHaveLength(1);
    // A POST of each new one (the parent exists: it is patched).
    expect(sent.filter((r) => r.path === `/api/v1/namespaces/${ns}/configmaps`)).toHaveLength(3);
    // The conflict leaves this set's inventory: it is another set's object.
    const inventory = (await inventoryOf(ns, 'mine'))?.annotations?.[
      'kubectl.kubernetes.io/last-applied-objects'
    ];
    expect(inventory).toContain(`:ConfigMap:fresh`);
    expect(inventory).toContain(`:ConfigMap:loose`);
    expect(inventory).not.toContain(`:ConfigMap:taken`);
  });
});
