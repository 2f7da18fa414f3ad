import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';
import {
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Issue #23, finding 3: an ApplySet's Git must not take over a sibling ApplySet. The controller runs
// with the chart's locked-down RBAC; every ApplySet names its ServiceAccount, each with a Role of its
// own, and none of them needs any right on applysets: the controller writes the inventory as itself.

/** An ApplySet manifest as a repository would hold it: `name`, applied as `account`, from `url`. */
const applySetYaml = (name: string, account: string, url: string) => `apiVersion: applyset.dev/v1alpha1
kind: ApplySet
metadata:
  name: ${name}
spec:
  serviceAccountName: ${account}
  source:
    url: ${url}
    ref: { branch: main }
  interval: 5s
  retryInterval: 2s
  prune: true
`;

/** What an account needs to write ApplySets: only granted where nesting is (app of apps). */
const APPLYSETS_RULE = {
  apiGroups: ['applyset.dev'],
  resources: ['applysets'],
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
};

const secretYaml = (name: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\nstringData:\n  stolen: "yes"\n`;

describe('no ApplySet takes over a sibling through its Git', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-sibling');
  const nesting = uniqueName('e2e-nesting');
  const other = uniqueName('e2e-sibling-other');
  const servers = new GitServerPool();
  const controllers: LockedDownController[] = [];

  beforeAll(async () => {
    await installCrd();
    for (const ns of [namespace, nesting, other]) await createNamespace(c.kc, ns);
    // `ops` may write Secrets; the other accounts may not. It also holds the Role the README used to
    // recommend on applysets, so that on the code before issue #23 (inventory written as the account)
    // `db` works and this suite shows it taken over; the controller needs none of it now.
    await createTenantAccount(c, namespace, 'ops', [
      coreRule('configmaps', 'secrets'),
      { apiGroups: ['applyset.dev'], resources: ['applysets'], verbs: ['get', 'patch', 'update'] },
    ]);
    // The accounts the suite's ApplySets name, which the chart lets the controller impersonate by name only.
    const accounts = (names: string[]) =>
      Object.fromEntries(names.map((name, i) => [`tenancy.serviceAccountNames[${i}]`, name]));
    controllers.push(
      await startLockedDownController({
        namespace,
        values: accounts(['ops', 'web-plain', 'web-writer', 'plain']),
      }),
    );
    controllers.push(
      await startLockedDownController({
        namespace: nesting,
        values: { 'tenancy.allowNestedApplySets': 'true', ...accounts(['apps', 'child']) },
      }),
    );
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    for (const controller of controllers) await controller.cleanup();
  });

  it.each([
    ['the Role the docs recommend (no rights on applysets)', 'web-plain', []],
    ['a Role that may also write applysets', 'web-writer', [APPLYSETS_RULE]],
  ])(
    "refuses an ApplySet in a set's manifests, with %s, before anything is written",
    async (_role, account, extra) => {
      const db = `db-${account}`;
      const web = `set-${account}`;
      await createTenantAccount(c, namespace, account, [coreRule('configmaps'), ...extra]);
      const dbGit = await servers.start({ files: { 'db.yaml': configMapYaml(`${db}-config`, { k: 'db' }) } });
      await createApplySet(c, namespace, db, { url: dbGit.url, serviceAccountName: 'ops' });
      await waitForAppliedCommit(c, namespace, db, await dbGit.revParse('main'), 30_000);

      // The attacker's source: a Secret that only `ops` may create.
      const attacker = await servers.start({ files: { 'steal.yaml': secretYaml(`${db}-planted`) } });
      const webGit = await servers.start({
        files: {
          'apps.yaml': `${configMapYaml(`${web}-config`, { k: 'web' })}---\n${applySetYaml(db, 'ops', attacker.url)}`,
        },
      });
      await createApplySet(c, namespace, web, { url: webGit.url, serviceAccountName: account });

      // web's first reconcile ends, whichever way: what it did to db is what the attacker would see.
      const refused = await waitFor(`ApplySet ${namespace}/${web} reconciled`, async () => {
        const view = await getApplySet(c, namespace, web);
        const ready = condition(view, 'Ready')?.status;
        return view?.status?.lastAttemptedRevision !== undefined && (ready === 'True' || ready === 'False')
          ? view
          : undefined;
      });
      // db is as it was, and nothing of web's was written.
      const dbNow = (await c.custom.getNamespacedCustomObject({
        group: 'applyset.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'applysets',
        name: db,
      })) as { spec: { serviceAccountName: string; source: { url: string } } };
      expect(dbNow.spec).toMatchObject({ serviceAccountName: 'ops', source: { url: dbGit.url } });
      expect(await configMapData(c, namespace, `${web}-config`)).toBeUndefined();
      expect(condition(refused, 'Ready')?.status).toBe('False');
      expect(condition(refused, 'Stalled')).toMatchObject({
        status: 'True',
        reason: 'NestedApplySetRefused',
      });
      expect(condition(refused, 'Ready')?.message).toContain(
        `manifest apps.yaml (document 1) is an ApplySet (${namespace}/${db}); an ApplySet's manifests may not create or change ApplySets unless the controller runs with --allow-nested-applysets`,
      );
      expect(refused.status?.errors?.items).toEqual([
        {
          object: `${namespace}:applyset.dev:ApplySet:${db}`,
          message: expect.stringContaining('is an ApplySet'),
        },
      ]);
      // db never asked the attacker's server, and no Secret was made as ops.
      expect(attacker.requests).toEqual([]);
      await expect(c.core.readNamespacedSecret({ namespace, name: `${db}-planted` })).rejects.toMatchObject({
        code: 404,
      });
    },
  );

  it('writes the inventory and prunes for an account with no rights on applysets, and never prunes what the account could not delete from a forged inventory', async () => {
    await createTenantAccount(c, namespace, 'plain', [coreRule('configmaps')]);
    const git = await servers.start({
      files: {
        'a.yaml': configMapYaml('plain-a', { k: 'a' }),
        'b.yaml': configMapYaml('plain-b', { k: 'b' }),
      },
    });
    await createApplySet(c, namespace, 'plain', { url: git.url, serviceAccountName: 'plain' });
    await waitForAppliedCommit(c, namespace, 'plain', await git.revParse('main'), 30_000);
    const pruned = await git.deleteFiles(['b.yaml']);
    const after = await waitForAppliedCommit(c, namespace, 'plain', pruned, 30_000);
    expect(after.status?.summary).toMatchObject({ pruned: 1 });
    expect(await configMapData(c, namespace, 'plain-b')).toBeUndefined();
    expect(after.metadata.annotations?.[MetadataKeys.lastAppliedObjects]).toBe(
      `${namespace}::ConfigMap:plain-a`,
    );

    // Whoever may edit the ApplySet lists in its inventory: a ConfigMap of another namespace, a Secret
    // the account may not touch, and an unowned ConfigMap it may delete but the set does not own.
    await c.core.createNamespacedConfigMap({ namespace: other, body: { metadata: { name: 'victim' } } });
    await c.core.createNamespacedSecret({ namespace, body: { metadata: { name: 'precious' } } });
    await c.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'bystander' } } });
    const forged = [
      `${namespace}::ConfigMap:bystander`,
      `${namespace}::ConfigMap:plain-a`,
      `${namespace}::Secret:precious`,
      `${other}::ConfigMap:victim`,
    ];
    await patchApplySet(namespace, 'plain', {
      metadata: {
        annotations: {
          [MetadataKeys.lastAppliedObjects]: forged.join('\n'),
          'applyset.dev/reconcile-requested-at': 'forged',
        },
      },
    });
    const judged = await waitFor('the reconcile of the forged inventory', async () => {
      const view = await getApplySet(c, namespace, 'plain');
      return view?.status?.lastHandledReconcileAt === 'forged' ? view : undefined;
    });
    expect(await configMapData(c, other, 'victim')).toEqual({});
    expect(await configMapData(c, namespace, 'bystander')).toEqual({});
    await expect(c.core.readNamespacedSecret({ namespace, name: 'precious' })).resolves.toBeDefined();
    expect(await configMapData(c, namespace, 'plain-a')).toEqual({ k: 'a' });
    expect(judged.status?.summary).toMatchObject({ pruned: 0 });
    // The ApplySet says why it kept what its account could not read or delete. The unowned ConfigMap
    // was never the set's: it is left alone as any unowned object is, without an error.
    expect(judged.status?.errors?.items).toEqual([
      { object: `${namespace}::Secret:precious`, message: expect.stringMatching(/not pruned: .*forbidden/i) },
      { object: `${other}::ConfigMap:victim`, message: expect.stringMatching(/not pruned: .*forbidden/i) },
    ]);
  });

  it('with --allow-nested-applysets, an account that may write applysets applies an app of apps', async () => {
    await createTenantAccount(c, nesting, 'apps', [coreRule('configmaps'), APPLYSETS_RULE]);
    await createTenantAccount(c, nesting, 'child', [coreRule('configmaps')]);
    const childGit = await servers.start({
      files: { 'c.yaml': configMapYaml('child-config', { k: 'child' }) },
    });
    const appsGit = await servers.start({
      files: { 'child.yaml': applySetYaml('child', 'child', childGit.url) },
    });
    await createApplySet(c, nesting, 'apps', { url: appsGit.url, serviceAccountName: 'apps' });
    await waitForAppliedCommit(c, nesting, 'apps', await appsGit.revParse('main'), 30_000);
    await waitForAppliedCommit(c, nesting, 'child', await childGit.revParse('main'), 30_000);
    expect(await configMapData(c, nesting, 'child-config')).toEqual({ k: 'child' });
  });
});
