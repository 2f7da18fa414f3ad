import * as k8s from '@kubernetes/client-node';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  GROUP,
  kubectl,
  patchApplySet,
  PLURAL,
  VERSION,
  waitFor,
  waitForReady,
} from './e2e-kit.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';

// What the controller does when its own record of the set cannot be trusted, when a set is let go,
// and when a prune cannot be judged: it deletes nothing it cannot vouch for, says so, and never hangs
// or conflicts with itself for good.

const INVENTORY = 'kubectl.kubernetes.io/last-applied-objects';
const APPLY_OWNER = 'kubectl.kubernetes.io/apply-owner';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const PART_OF = 'applyset.kubernetes.io/part-of';
const RECONCILE_REQUESTED_AT = 'applyset.dev/reconcile-requested-at';

describe('the controller keeps children safe', () => {
  const c = cluster();
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const namespace = uniqueName('e2e-safe');
  const servers = new GitServerPool();

  const serve = (files: Record<string, string>) => servers.start({ files });

  /** Asks for a reconcile now, with a value never used before. */
  let requests = 0;
  const requestReconcile = async (name: string): Promise<string> => {
    requests += 1;
    const value = `request-${requests}-${Date.now()}`;
    await patchApplySet(namespace, name, { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: value } } });
    return value;
  };

  const readConfigMap = async (name: string): Promise<k8s.V1ConfigMap | undefined> => {
    try {
      return await c.core.readNamespacedConfigMap({ namespace, name });
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  };

  const applySetObject = async (name: string) =>
    (await c.custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      name,
    })) as {
      metadata: {
        uid: string;
        annotations?: Record<string, string>;
        deletionTimestamp?: string;
        finalizers?: string[];
      };
    };

  const eventsOf = async (name: string) =>
    (await c.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items;

  const waitGone = (name: string, timeoutMs = 30_000) =>
    waitFor(
      `ApplySet ${name} to be gone`,
      async () => ((await getApplySet(c, namespace, name)) === undefined ? true : undefined),
      timeoutMs,
    );

  beforeAll(async () => {
    await startControllerInNamespace(c, namespace);
  });

  afterAll(() => stopControllersAndGit(servers));

  it('a damaged inventory stalls naming the line, prunes nothing, and a Delete deletion waits until Orphan', async () => {
    const name = 'damaged';
    const git = await serve({
      'a.yaml': configMapYaml('damaged-a', { k: 'a' }),
      'b.yaml': configMapYaml('damaged-b', { k: 'b' }),
    });
    await createApplySet(c, namespace, name, { url: git.url, deletionPolicy: 'Delete' });
    await waitForReady(c, namespace, name, 'True');
    const inventory = (await applySetObject(name)).metadata.annotations?.[INVENTORY] ?? '';
    const lines = inventory.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toEqual([`${namespace}::ConfigMap:damaged-a`, `${namespace}::ConfigMap:damaged-b`]);

    // Someone edits the record by hand: line 2 is no object reference.
    const damaged = [lines[0], 'garbage-without-colons', ...lines.slice(1)].join('\n');
    await patchApplySet(namespace, name, { metadata: { annotations: { [INVENTORY]: damaged } } });
    // b leaves Git: from an intact inventory it would be pruned.
    const sha = await git.deleteFiles(['b.yaml']);
    await requestReconcile(name);

    const stalled = await waitForReady(
      c,
      namespace,
      name,
      'False',
      (v) =>
        v.status?.lastAttemptedRevision === `main@sha1:${sha}` &&
        condition(v, 'Ready')?.reason === 'InventoryInvalid',
    );
    expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'InventoryInvalid' });
    // Stalled, not retried with backoff.
    expect(condition(stalled, 'Reconciling')?.status).toBe('False');
    const message = condition(stalled, 'Ready')?.message ?? '';
    expect(message).toContain(INVENTORY);
    expect(message).toContain('line 2');
    expect(message).toContain('garbage-without-colons');
    expect(stalled.status?.errors?.items.map((item) => item.message).join('\n')).toContain(
      'garbage-without-colons',
    );
    expect(stalled.status?.lastAppliedRevision).not.toBe(`main@sha1:${sha}`);
    expect(await configMapData(c, namespace, 'damaged-b')).toEqual({ k: 'b' });
    // The record is left for a human to mend, not rewritten.
    expect((await applySetObject(name)).metadata.annotations?.[INVENTORY]).toBe(damaged);

    // deletionPolicy Delete cannot prune from it: the deletion waits, and says how to get out.
    await kubectl(['-n', namespace, 'delete', `${PLURAL}.${GROUP}/${name}`, '--wait=false']);
    const deleting = await waitForReady(c, namespace, name, 'False', (v) =>
      (condition(v, 'Ready')?.message ?? '').includes('Orphan'),
    );
    expect(condition(deleting, 'Ready')?.reason).toBe('InventoryInvalid');
    expect(condition(deleting, 'Stalled')).toMatchObject({ status: 'True', reason: 'InventoryInvalid' });
    expect(condition(deleting, 'Ready')?.message).toContain('garbage-without-colons');
    expect(condition(deleting, 'Ready')?.message).toContain('deletionPolicy: Orphan');
    const event = await waitFor('an InventoryInvalid event naming Orphan', async () =>
      (await eventsOf(name)).find(
        (e) =>
          e.reason === 'InventoryInvalid' && e.type === 'Warning' && (e.message ?? '').includes('Orphan'),
      ),
    );
    expect(event.message).toContain('garbage-without-colons');

    // Another reconcile, handled while deleting, still lets nothing go.
    const handled = await requestReconcile(name);
    await waitFor('the deleting ApplySet to handle another reconcile', async () => {
      const view = await getApplySet(c, namespace, name);
      return view?.status?.lastHandledReconcileAt === handled ? view : undefined;
    });
    const held = await applySetObject(name);
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.metadata.finalizers).toContain('applyset.dev/finalizer');
    expect(await configMapData(c, namespace, 'damaged-a')).toEqual({ k: 'a' });
    expect(await configMapData(c, namespace, 'damaged-b')).toEqual({ k: 'b' });

    // The way out: Orphan lets the ApplySet go and leaves the children, released.
    await patchApplySet(namespace, name, { spec: { deletionPolicy: 'Orphan' } });
    await waitGone(name);
    for (const child of ['damaged-a', 'damaged-b']) {
      const live = await readConfigMap(child);
      expect(live?.data).toEqual({ k: child.slice(-1) });
      expect(live?.metadata?.annotations?.[APPLY_OWNER]).toBeUndefined();
      expect(live?.metadata?.labels?.[PART_OF]).toBeUndefined();
      expect(live?.metadata?.annotations?.[LAST_APPLIED]).toBeDefined();
    }
  });

  it('Orphan releases the children, so the same ApplySet created again adopts them without a conflict', async () => {
    const name = 'again';
    const labelled = (child: string, data: Record<string, string>) =>
      configMapYaml(child, data).replace('metadata:\n', 'metadata:\n  labels:\n    team: blue\n');
    const git = await serve({
      'a.yaml': labelled('again-a', { k: 'a' }),
      'b.yaml': labelled('again-b', { k: 'b' }),
    });
    await createApplySet(c, namespace, name, { url: git.url, deletionPolicy: 'Orphan' });
    await waitForReady(c, namespace, name, 'True');
    const firstUid = (await applySetObject(name)).metadata.uid;
    const before = new Map<string, k8s.V1ConfigMap>();
    for (const child of ['again-a', 'again-b']) {
      const live = await readConfigMap(child);
      expect(live?.metadata?.annotations?.[APPLY_OWNER]).toBe(firstUid);
      expect(live?.metadata?.labels?.[PART_OF]).toBeDefined();
      before.set(child, live as k8s.V1ConfigMap);
    }

    await kubectl(['-n', namespace, 'delete', `${PLURAL}.${GROUP}/${name}`, '--wait=false']);
    await waitGone(name);
    for (const [child, was] of before) {
      const live = await readConfigMap(child);
      expect(live?.metadata?.uid).toBe(was.metadata?.uid);
      expect(live?.data).toEqual(was.data);
      // The ownership marks are gone and nothing else changed.
      const { [APPLY_OWNER]: _owner, ...otherAnnotations } = was.metadata?.annotations ?? {};
      const { [PART_OF]: _partOf, ...otherLabels } = was.metadata?.labels ?? {};
      expect(live?.metadata?.annotations ?? {}).toEqual(otherAnnotations);
      expect(live?.metadata?.labels ?? {}).toEqual(otherLabels);
      expect(otherLabels).toEqual({ team: 'blue' });
      expect(otherAnnotations[LAST_APPLIED]).toBeDefined();
    }

    // The same ApplySet again: a new uid, which adopts the released children.
    await createApplySet(c, namespace, name, { url: git.url, deletionPolicy: 'Orphan' });
    const secondUid = (await applySetObject(name)).metadata.uid;
    expect(secondUid).not.toBe(firstUid);
    const ready = await waitForReady(c, namespace, name, 'True');
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    expect(ready.status?.errors?.totalCount ?? 0).toBe(0);
    expect(ready.status?.summary?.['failed'] ?? 0).toBe(0);
    expect((await eventsOf(name)).map((e) => e.reason)).not.toContain('OwnershipConflict');
    for (const child of ['again-a', 'again-b']) {
      const live = await readConfigMap(child);
      expect(live?.metadata?.annotations?.[APPLY_OWNER]).toBe(secondUid);
      expect(live?.metadata?.labels?.[PART_OF]).toBe(before.get(child)?.metadata?.labels?.[PART_OF]);
      expect(live?.data).toEqual(before.get(child)?.data);
    }
  });

  it('a prune that cannot read its object is reported as PruneIncomplete, deletes nothing, and completes later', async () => {
    const name = 'incomplete';
    const account = 'pruner';
    await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
    const role = (secretVerbs: string[]): k8s.V1Role => ({
      metadata: { name: account },
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'],
        },
        { apiGroups: [''], resources: ['secrets'], verbs: secretVerbs },
        // The inventory is written as the account too.
        { apiGroups: [GROUP], resources: [PLURAL], resourceNames: [name], verbs: ['get', 'patch', 'update'] },
      ],
    });
    const allSecretVerbs = ['get', 'list', 'create', 'patch', 'update', 'delete'];
    await rbac.createNamespacedRole({ namespace, body: role(allSecretVerbs) });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: account },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
      },
    });
    const secretYaml = [
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      '  name: incomplete-secret',
      'data:',
      `  token: ${Buffer.from('not-very-secret').toString('base64')}`,
      '',
    ].join('\n');
    const git = await serve({
      'cm.yaml': configMapYaml('incomplete-cm', { k: 'v' }),
      'secret.yaml': secretYaml,
    });
    // Only the test's reconcile requests (and retries) run it: no poll races the RBAC changes below.
    await createApplySet(c, namespace, name, { url: git.url, serviceAccountName: account, interval: '10m' });
    const first = await waitForReady(c, namespace, name, 'True');
    expect(first.status?.summary?.['applied']).toBe(2);
    await c.core.readNamespacedSecret({ namespace, name: 'incomplete-secret' });

    // The account may no longer read Secrets, and the Secret leaves Git.
    await rbac.replaceNamespacedRole({
      namespace,
      name: account,
      body: role(['create', 'patch', 'update', 'delete']),
    });
    const sha = await git.deleteFiles(['secret.yaml']);
    await requestReconcile(name);
    const view = await waitForReady(
      c,
      namespace,
      name,
      'False',
      (v) =>
        v.status?.lastAttemptedRevision === `main@sha1:${sha}` &&
        condition(v, 'Ready')?.reason === 'PruneIncomplete',
    );
    const secretKey = `${namespace}::Secret:incomplete-secret`;
    expect(condition(view, 'Ready')?.message).toContain(secretKey);
    expect(condition(view, 'Stalled')?.status).toBe('False');
    expect(view.status?.summary?.['pruneSkipped']).toBe(1);
    expect(view.status?.errors?.items).toContainEqual(expect.objectContaining({ object: secretKey }));
    expect(view.status?.lastAppliedRevision).not.toBe(`main@sha1:${sha}`);
    const event = await waitFor('a PruneIncomplete event', async () =>
      (await eventsOf(name)).find((e) => e.reason === 'PruneIncomplete'),
    );
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(secretKey);
    // Nothing was deleted that could not be judged.
    await c.core.readNamespacedSecret({ namespace, name: 'incomplete-secret' });
    expect(await configMapData(c, namespace, 'incomplete-cm')).toEqual({ k: 'v' });

    // The rights come back: the prune completes.
    await rbac.replaceNamespacedRole({ namespace, name: account, body: role(allSecretVerbs) });
    await requestReconcile(name);
    const done = await waitForReady(
      c,
      namespace,
      name,
      'True',
      (v) => v.status?.lastAppliedRevision === `main@sha1:${sha}`,
    );
    expect(done.status?.summary?.['pruneSkipped'] ?? 0).toBe(0);
    expect(done.status?.errors?.totalCount).toBe(0);
    await waitFor('the Secret to be pruned', async () => {
      try {
        await c.core.readNamespacedSecret({ namespace, name: 'incomplete-secret' });
        return undefined;
      } catch (error) {
        if ((error as { code?: number }).code === 404) return true;
        throw error;
      }
    });
    expect(await configMapData(c, namespace, 'incomplete-cm')).toEqual({ k: 'v' });
  });
});
