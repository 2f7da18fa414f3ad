import { memberWatchesOf, type MemberWatches } from '../../src/controller/member-watches.js';
import { createKubeClient, type KubeClient, type KubeMethod } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import type { ResourceLocation } from '../../src/kube/kube-object-api.js';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { isJsonObject, type JsonValue } from '../../src/manifests/json-value.js';
import { waitFor } from '../e2e/wait-for.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';

// Issue #39: a reconcile at rest reads the resourceVersion of each object its set holds. Where many
// sets of one account hold objects of one kind in one namespace, one watch of that collection, opened
// as that account, answers them from memory. These tests hold it to the real API server: what it
// answers is what a GET answers, it follows edits and deletions, it is opened only once enough sets
// ask, and an account that may not list the kind gets no answer (its sets read with GETs).

interface Sent {
  readonly method: KubeMethod;
  readonly path: string;
}

const credentials = () => createKubeCredentials(adminKubeConfig());

function clientAs(user: string | undefined, sent: Sent[]): KubeClient {
  return createKubeClient({
    credentials: credentials(),
    onRequest: (method, path) => sent.push({ method, path }),
    ...(user === undefined ? {} : { impersonateUser: user }),
  });
}

function quietLogger(lines: string[]) {
  const log = (_object: object, message: string) => void lines.push(message);
  return { info: log, warn: log, debug: log };
}

const metadataOf = (value: JsonValue) =>
  isJsonObject(value) && isJsonObject(value['metadata']) ? value['metadata'] : {};

describe('watches of the objects ApplySets hold', () => {
  const namespace = uniqueName('members');
  const admin = clientAs(undefined, []);
  const location: ResourceLocation = { group: '', version: 'v1', resource: 'configmaps', namespace };
  const collection = `/api/v1/namespaces/${namespace}/configmaps`;
  const lister = `system:serviceaccount:${namespace}:lister`;
  const getter = `system:serviceaccount:${namespace}:getter`;
  const nonWatcher = `system:serviceaccount:${namespace}:non-watcher`;
  const stop = new AbortController();

  const create = (name: string, labelled: boolean) =>
    admin.request({
      method: 'POST',
      path: collection,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, ...(labelled ? { labels: { [MetadataKeys.applySetPartOf]: 'set-id' } } : {}) },
        data: { v: '1' },
      }),
    });
  const versionOnServer = async (name: string) =>
    metadataOf(await admin.request({ method: 'GET', path: `${collection}/${name}` }))['resourceVersion'];

  /** Binds `account` to a Role of `verbs` on ConfigMaps in the namespace. */
  const grant = async (account: string, verbs: string[]) => {
    const post = (path: string, body: object) =>
      admin.request({ method: 'POST', path, body: JSON.stringify(body) });
    await post(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: account },
    });
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}`;
    await post(`${rbac}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: account },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs }],
    });
    await post(`${rbac}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: account },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    });
  };

  beforeAll(async () => {
    await createNamespace(adminKubeConfig(), namespace);
    await grant('lister', ['get', 'list', 'watch']);
    await grant('getter', ['get']);
    await grant('non-watcher', ['get', 'list']);
    // More than one page of the watch's LIST (100 objects), and one object without the label.
    for (let index = 0; index < 130; index += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, offset) => create(`cm-${index + offset}`, true)));
    }
    await create('unlabelled', false);
  }, 120_000);

  afterAll(() => stop.abort());

  const watchesOf = (sent: Sent[], logs: string[], settings: { minSets: number; maxWatches: number }) => {
    const watches = memberWatchesOf(settings, {
      watcherAs: (user) => clientAs(user, sent),
      logger: quietLogger(logs),
      signal: stop.signal,
    });
    if (watches === undefined) throw new Error('no member watches for maxWatches > 0');
    return watches;
  };

  /** Asks as `sets` distinct ApplySets; the answer of the last. */
  const askAs = (watches: MemberWatches, user: string, sets: number, names: string[]) => {
    let answer: (string | null)[] | undefined;
    for (let set = 0; set < sets; set++) answer = watches.versionsOf(user, location, names, `ns/set-${set}`);
    return answer;
  };

  it('opens a watch once enough sets ask, and answers what a GET answers', async () => {
    const sent: Sent[] = [];
    const watches = watchesOf(sent, [], { minSets: 3, maxWatches: 2 });
    expect(askAs(watches, lister, 2, ['cm-1'])).toBeUndefined();
    expect(sent).toEqual([]);
    expect(watches.size()).toBe(0);
    // The same set asking again does not count twice.
    expect(askAs(watches, lister, 2, ['cm-1'])).toBeUndefined();
    expect(watches.size()).toBe(0);
    expect(askAs(watches, lister, 3, ['cm-1'])).toBeUndefined();
    expect(watches.size()).toBe(1);
    const names = ['cm-0', 'cm-129', 'unlabelled', 'missing'];
    const answer = await waitFor('the watch to list', async () => askAs(watches, lister, 1, names));
    expect(answer).toEqual([await versionOnServer('cm-0'), await versionOnServer('cm-129'), null, null]);
    // Listed in pages of 100, as the account: two LISTs, then one watch.
    expect(sent.filter((each) => each.path === collection).map((each) => each.method)).toEqual([
      'GET',
      'GET',
      'GET',
    ]);
  }, 60_000);

  it('follows an edit and a deletion made after it listed', async () => {
    const watches = watchesOf([], [], { minSets: 1, maxWatches: 1 });
    await waitFor('the watch to list', async () => askAs(watches, lister, 1, ['cm-5']));
    const before = await versionOnServer('cm-5');
    await admin.request({
      method: 'PATCH',
      path: `${collection}/cm-5`,
      contentType: 'application/merge-patch+json',
      body: JSON.stringify({ data: { v: 'edited' } }),
    });
    const after = await versionOnServer('cm-5');
    expect(after).not.toBe(before);
    await waitFor('the edit heard', async () =>
      askAs(watches, lister, 1, ['cm-5'])?.[0] === after ? true : undefined,
    );
    await admin.request({ method: 'DELETE', path: `${collection}/cm-6` });
    await waitFor('the deletion heard', async () =>
      askAs(watches, lister, 1, ['cm-6'])?.[0] === null ? true : undefined,
    );
  }, 60_000);

  it.each([
    ['list', () => getter],
    ['watch', () => nonWatcher],
  ])(
    'gives no answer to an account that may not %s the kind, and does not ask it again',
    async (_verb, user) => {
      const sent: Sent[] = [];
      const logs: string[] = [];
      const watches = watchesOf(sent, logs, { minSets: 1, maxWatches: 4 });
      expect(askAs(watches, user(), 1, ['cm-1'])).toBeUndefined();
      await waitFor('the refusal', async () =>
        logs.includes('member watch refused; its objects are read with GETs') ? true : undefined,
      );
      expect(watches.size()).toBe(0);
      const asked = sent.length;
      expect(askAs(watches, user(), 5, ['cm-1'])).toBeUndefined();
      expect(watches.size()).toBe(0);
      expect(sent.length).toBe(asked);
    },
    60_000,
  );

  it('opens no more than maxWatches while those open are in use', async () => {
    const watches = watchesOf([], [], { minSets: 1, maxWatches: 1 });
    askAs(watches, lister, 1, ['cm-1']);
    expect(watches.size()).toBe(1);
    // Another account's watch of the same collection would be a second one: no room for it.
    expect(askAs(watches, `system:serviceaccount:${namespace}:other`, 1, ['cm-1'])).toBeUndefined();
    expect(watches.size()).toBe(1);
  });
});
