import * as k8s from '@kubernetes/client-node';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { createNamespace, kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  GROUP,
  installCrd,
  kubectl,
  patchApplySet,
  PLURAL,
  waitForAppliedCommit,
  waitFor,
  waitForReady,
  type Cluster,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import { clusterAdminBindingYaml } from './e2e-manifests.js';
import { GitServerPool } from './git-server-pool.js';
import {
  coreRule,
  createTenantAccount,
  DEFAULT_ACCOUNT,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// The tenancy lockdown: with --default-service-account, an ApplySet is never applied as the controller.
// Whatever it does, it does as a ServiceAccount of its own namespace, with that account's rights only.
// The controllers run with the chart's locked-down RBAC and arguments (locked-down-controller.ts).

/**
 * What a tenant's deployer gets: its namespace's ConfigMaps, and no rights on ApplySets: the controller
 * writes a set's inventory to the ApplySet as itself.
 */
function grantTenantRole(c: Cluster, namespace: string, account: string): Promise<void> {
  return createTenantAccount(c, namespace, account, [coreRule('configmaps')]);
}

describe("the controller with --default-service-account, under the chart's locked-down RBAC", () => {
  const c = cluster();
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const teamA = uniqueName('team-a');
  const other = uniqueName('team-other');
  const teamB = uniqueName('team-b');
  const servers = new GitServerPool();
  const controllers: LockedDownController[] = [];

  const serve = (files: Record<string, string>) => servers.start({ files });

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, teamA);
    await createNamespace(c.kc, other);
    await createNamespace(c.kc, teamB);
    // One controller per tenant namespace (the other suites' ApplySets are none of their business), each
    // installed as the chart's locked-down mode installs it: it holds no rights on children of its own.
    // The chart lets the controller impersonate the default account and the names listed in
    // tenancy.serviceAccountNames only: the accounts this suite's ApplySets name.
    const values = {
      'tenancy.serviceAccountNames[0]': 'adopter',
      'tenancy.serviceAccountNames[1]': 'owner-a',
      'tenancy.serviceAccountNames[2]': 'owner-b',
    };
    controllers.push(await startLockedDownController({ namespace: teamA, values }));
    controllers.push(await startLockedDownController({ namespace: teamB, values }));
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    for (const controller of controllers) await controller.cleanup();
  });

  it('applies an ApplySet without serviceAccountName as the default account of its namespace, and only with its rights', async () => {
    const escalation = uniqueName('tenant-escalation');
    const git = await serve({ 'app.yaml': configMapYaml('app-config', { k: 'v' }) });
    await createApplySet(c, teamA, 'apps', { url: git.url });

    // No such account in team-a: stalled, nothing applied (not even as the controller).
    const missing = await waitForReady(c, teamA, 'apps', 'False');
    expect(condition(missing, 'Ready')?.reason).toBe('ServiceAccountNotFound');
    expect(condition(missing, 'Stalled')).toMatchObject({ status: 'True', reason: 'ServiceAccountNotFound' });
    expect(condition(missing, 'Ready')?.message).toContain(`ServiceAccount ${teamA}/${DEFAULT_ACCOUNT}`);
    expect(await configMapData(c, teamA, 'app-config')).toBeUndefined();

    // The account, with a Role in team-a: the next reconcile applies the set as that account.
    await grantTenantRole(c, teamA, DEFAULT_ACCOUNT);
    await waitForAppliedCommit(c, teamA, 'apps', await git.revParse('main'), 20_000);
    expect(await configMapData(c, teamA, 'app-config')).toEqual({ k: 'v' });

    // A ClusterRoleBinding to cluster-admin in the same repository: the account may not, so it is refused.
    await git.writeFiles({ 'escalate.yaml': clusterAdminBindingYaml(escalation, teamA, DEFAULT_ACCOUNT) });
    const refused = await waitForReady(c, teamA, 'apps', 'False', (view) =>
      (view.status?.errors?.items ?? []).some((e) => e.object.includes(escalation)),
    );
    const bindingError = refused.status?.errors?.items.find((e) => e.object.includes(escalation));
    expect(bindingError?.message).toMatch(/forbidden/i);
    expect(bindingError?.message).toContain(`system:serviceaccount:${teamA}:${DEFAULT_ACCOUNT}`);
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });

    // An object naming another namespace: the account has no rights there either.
    await git.deleteFiles(['escalate.yaml']);
    await git.writeFiles({ 'elsewhere.yaml': configMapYaml('planted', { k: 'v' }, other) });
    const elsewhere = await waitForReady(c, teamA, 'apps', 'False', (view) =>
      (view.status?.errors?.items ?? []).some((e) => e.object.startsWith(`${other}:`)),
    );
    expect(elsewhere.status?.errors?.items.find((e) => e.object.startsWith(`${other}:`))?.message).toMatch(
      /forbidden/i,
    );
    expect(await configMapData(c, other, 'planted')).toBeUndefined();
    await expect(rbac.readClusterRoleBinding({ name: escalation })).rejects.toMatchObject({ code: 404 });
  });

  it('reports every adoption of an unowned object, and with spec.adopt: false leaves it alone as a conflict', async () => {
    await grantTenantRole(c, teamA, 'adopter');
    await c.core.createNamespacedConfigMap({
      namespace: teamA,
      body: { metadata: { name: 'made-by-hand' }, data: { from: 'hand' } },
    });
    const git = await serve({ 'cm.yaml': configMapYaml('made-by-hand', { from: 'git' }) });
    await createApplySetWithSpec(
      c,
      teamA,
      'adopting',
      { url: git.url, serviceAccountName: 'adopter' },
      { adopt: false },
    );
    const liveConfigMap = () => c.core.readNamespacedConfigMap({ namespace: teamA, name: 'made-by-hand' });

    const refused = await waitForReady(c, teamA, 'adopting', 'False');
    expect(condition(refused, 'Stalled')).toMatchObject({ status: 'True', reason: 'OwnershipConflict' });
    expect(refused.status?.errors?.items).toEqual([
      {
        object: `${teamA}::ConfigMap:made-by-hand`,
        message: expect.stringContaining('exists without an apply-owner and adoption is disabled'),
      },
    ]);
    const untouched = await liveConfigMap();
    expect(untouched.data).toEqual({ from: 'hand' });
    expect(untouched.metadata?.annotations?.[MetadataKeys.applyOwner]).toBeUndefined();

    // Adoption allowed again: taken over, and said so in the summary and the event.
    await patchApplySet(teamA, 'adopting', { spec: { adopt: true } });
    const adopted = await waitForAppliedCommit(c, teamA, 'adopting', await git.revParse('main'), 20_000);
    expect(adopted.status?.summary).toMatchObject({ applied: 1, adopted: 1 });
    const taken = await liveConfigMap();
    expect(taken.data).toEqual({ from: 'git' });
    expect(taken.metadata?.annotations?.[MetadataKeys.applyOwner]).toEqual(expect.any(String));
    const event = await waitFor('the adoption event', async () =>
      (
        await c.core.listNamespacedEvent({ namespace: teamA, fieldSelector: 'involvedObject.name=adopting' })
      ).items.find((e) => e.reason === 'ReconciliationSucceeded'),
    );
    expect(event.message).toContain(`1 adopted; adopted: ${teamA}::ConfigMap:made-by-hand`);
  });

  it("a tenant who forges another set's apply-owner on its own objects gets nothing deleted, and the forgery is reported", async () => {
    await grantTenantRole(c, teamA, 'owner-a');
    await grantTenantRole(c, teamB, 'owner-b');
    const gitA = await serve({ 'a.yaml': configMapYaml('a-config', { k: 'a' }) });
    const gitB = await serve({
      'b.yaml': configMapYaml('b-config', { k: 'b' }),
      'keep.yaml': configMapYaml('b-keep', { k: 'b' }),
    });
    await createApplySet(c, teamA, 'set-a', { url: gitA.url, serviceAccountName: 'owner-a' });
    // B runs only when asked: a run on schedule between the forgery and B's new commit would judge the
    // planted object on its own, and this test reads the one run that judges both.
    await createApplySet(c, teamB, 'set-b', { url: gitB.url, serviceAccountName: 'owner-b', interval: '1h' });
    await waitForAppliedCommit(c, teamA, 'set-a', await gitA.revParse('main'), 20_000);
    await waitForAppliedCommit(c, teamB, 'set-b', await gitB.revParse('main'), 20_000);
    const ownerA = (await c.core.readNamespacedConfigMap({ namespace: teamA, name: 'a-config' })).metadata
      ?.annotations?.[MetadataKeys.applyOwner];
    expect(ownerA).toEqual(expect.any(String));

    // Tenant B, with its own account's rights only: marks its objects as set A's, and lists one in an inventory.
    const asB = await kubeconfigForServiceAccount(teamB, 'owner-b');
    const forged = `${MetadataKeys.applyOwner}=${ownerA ?? ''}`;
    await kubectl(['-n', teamB, 'annotate', 'configmap', 'b-config', forged, '--overwrite'], asB);
    await kubectl(['-n', teamB, 'create', 'configmap', 'b-planted', '--from-literal=k=b'], asB);
    await kubectl(['-n', teamB, 'annotate', 'configmap', 'b-planted', forged], asB);
    // Set A's inventory is out of B's reach: it lives on set A's ApplySet, in team-a.
    const planted = `${teamB}::ConfigMap:b-config\n${teamB}::ConfigMap:b-planted`;
    await expect(
      kubectl(
        [
          '-n',
          teamA,
          'annotate',
          `${PLURAL}.${GROUP}`,
          'set-a',
          `${MetadataKeys.lastAppliedObjects}=${planted}`,
          '--overwrite',
        ],
        asB,
      ),
    ).rejects.toThrow(/forbidden/i);
    // B's own inventory is within reach of whoever may edit team-b's ApplySets (not of B's deployer
    // account, which has no rights on ApplySets): it lists the planted object too.
    const inventoryB = (
      await kubectl(['-n', teamB, 'get', `${PLURAL}.${GROUP}`, 'set-b', '-o', 'json'])
    ).trim();
    const linesB = (JSON.parse(inventoryB) as { metadata: { annotations: Record<string, string> } }).metadata
      .annotations[MetadataKeys.lastAppliedObjects];
    await kubectl([
      '-n',
      teamB,
      'annotate',
      `${PLURAL}.${GROUP}`,
      'set-b',
      `${MetadataKeys.lastAppliedObjects}=${[linesB, `${teamB}::ConfigMap:b-planted`].sort().join('\n')}`,
      '--overwrite',
    ]);

    // Set A reconciles (requested): it prunes only from its own inventory, so nothing of B's goes.
    await patchApplySet(teamA, 'set-a', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'forgery' } },
    });
    const afterA = await waitForReady(
      c,
      teamA,
      'set-a',
      'True',
      (view) => view.status?.lastHandledReconcileAt === 'forgery',
    );
    expect(afterA.status?.summary).toMatchObject({ pruned: 0 });
    expect(await configMapData(c, teamB, 'b-config')).toEqual({ k: 'b' });
    expect(await configMapData(c, teamB, 'b-planted')).toEqual({ k: 'b' });

    // B drops b-config from Git: its own set keeps what names set A as owner, and says so.
    const sha = await gitB.deleteFiles(['b.yaml']);
    await patchApplySet(teamB, 'set-b', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'dropped-b' } },
    });
    const afterB = await waitForAppliedCommit(c, teamB, 'set-b', sha, 20_000);
    expect(await configMapData(c, teamB, 'b-config')).toEqual({ k: 'b' });
    expect(await configMapData(c, teamB, 'b-planted')).toEqual({ k: 'b' });
    expect(afterB.status?.errors?.items).toEqual(
      expect.arrayContaining([
        { object: `${teamB}::ConfigMap:b-config`, message: expect.stringContaining(`owned by another set`) },
        { object: `${teamB}::ConfigMap:b-planted`, message: expect.stringContaining(`owned by another set`) },
      ]),
    );
    const warning = await waitFor('the kept-for-another-set event', async () =>
      (
        await c.core.listNamespacedEvent({ namespace: teamB, fieldSelector: 'involvedObject.name=set-b' })
      ).items.find((e) => e.reason === 'PruneSkippedOwnedByOther'),
    );
    expect(warning.message).toContain(`${teamB}::ConfigMap:b-config`);
    expect(warning.message).toContain(ownerA);
  });
});
