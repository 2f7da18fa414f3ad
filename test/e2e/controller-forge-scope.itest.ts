import { uniqueName } from '../harness/test-cluster.js';
import { startGiteaServer, type GiteaServer, type GiteaUser } from '../harness/gitea-server.js';
import {
  GROUP,
  VERSION,
  applySetBody,
  cluster,
  configMapYaml,
  installCrd,
  kubectl,
  kubectlApply,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Issue #33: a ClusterNotification's forge token is the platform's, and the repository a commit status
// goes to is the one a tenant's ApplySet names. With the chart's RBAC and a real Gitea, a tenant's
// ApplySet naming a repository of another owner (readable, so its commit applies) gets no status
// there: the platform token marks only the repositories spec.repositories lists, and the
// ClusterNotification's status says why, without the token.

describe("a ClusterNotification's forge token marks only the repositories it lists", () => {
  const c = cluster();
  const shard = uniqueName('forge-scope');
  const tenant = uniqueName('tenant');
  const clusterNotification = uniqueName('platform-forge');
  let forge: GiteaServer;
  let platform: GiteaUser;
  let rival: GiteaUser;
  let controller: LockedDownController | undefined;

  beforeAll(async () => {
    await installCrd();
    await c.core.createNamespace({ body: { metadata: { name: tenant } } });
    await createTenantAccount(c, tenant, DEFAULT_ACCOUNT, [coreRule('configmaps'), coreRule('secrets')]);
    forge = await startGiteaServer();
    platform = await forge.createUser('platform');
    rival = await forge.createUser('rival');
    controller = await startLockedDownController({
      namespace: undefined,
      values: {
        watchLabelSelector: `applyset.dev/e2e-shard in (${shard})`,
        'notifications.clusterSecretNames[0]': 'forge-token',
      },
    });
  });

  afterAll(async () => {
    await stopAllControllers();
    await kubectl(['delete', '--ignore-not-found', `clusternotifications.${GROUP}/${clusterNotification}`]);
    await controller?.cleanup();
    await forge?.close();
  });

  it("marks the listed repository's commit, and not the commit of another owner's repository a tenant names", async () => {
    // Both public; the harness's forge asks every reader to sign in, so the tenant reads them with a
    // reader of its own (its Git credentials say nothing about the platform's token).
    const reader = await forge.createUser('reader');
    await c.core.createNamespacedSecret({
      namespace: tenant,
      body: {
        metadata: { name: 'git-reader', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { username: reader.username, password: reader.token },
      },
    });
    const listed = await forge.createRepository('platform', 'site', platform, { private: false });
    const other = await forge.createRepository('rival', 'release', rival, { private: false });
    const listedSha = await forge.push(listed, platform, { 'cm.yaml': configMapYaml('site', { v: '1' }) });
    const otherSha = await forge.push(other, rival, { 'cm.yaml': configMapYaml('release', { v: '1' }) });

    // The platform's token: the site admin's, which may write every repository of the forge.
    const controllerNamespace = (controller as LockedDownController).user.split(':')[2] ?? '';
    const host = new URL(forge.url).host;
    await c.core.createNamespacedSecret({
      namespace: controllerNamespace,
      body: {
        metadata: { name: 'forge-token', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { address: forge.url, token: forge.admin.token },
      },
    });
    await c.custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'clusternotifications',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ClusterNotification',
        metadata: { name: clusterNotification },
        spec: {
          namespaces: { names: [tenant] },
          repositories: [`${host}/platform/*`],
          provider: { type: 'gitea', secretRef: { name: 'forge-token' } },
        },
      },
    });
    const labelled = (name: string, url: string) => {
      const body = applySetBody(tenant, name, { url, interval: '1h', secretName: 'git-reader' }) as {
        metadata: Record<string, unknown>;
      };
      body.metadata['labels'] = { 'applyset.dev/e2e-shard': shard };
      return JSON.stringify(body);
    };
    await kubectlApply([labelled('site', listed.cloneUrl), labelled('rival', other.cloneUrl)].join('\n'));
    await waitForAppliedCommit(c, tenant, 'site', listedSha, 60_000);
    await waitForAppliedCommit(c, tenant, 'rival', otherSha, 60_000);

    // The listed repository's commit is marked success, with the platform's token.
    const marked = await waitFor('a success status on the listed commit', async () => {
      const statuses = await forge.commitStatuses(listed, listedSha, platform);
      return statuses.some((s) => s.status === 'success') ? statuses : undefined;
    });
    expect(marked.map((s) => s.context)).toContain(`applyset/in-cluster/${tenant}/site`);

    // The other owner's repository: the ClusterNotification says why in its status, and marks nothing.
    const refused = await waitFor('the refusal in the status of the ClusterNotification', async () => {
      const object = (await c.custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'clusternotifications',
        name: clusterNotification,
      })) as { status?: { skipped?: Record<string, { message?: string }> } };
      return object.status?.skipped?.[`${tenant}/rival`];
    });
    expect(refused.message).toBe(
      `ClusterNotification ${clusterNotification} marks only the repositories its spec.repositories lists (${host}/platform/*), and the ApplySet's source is ${host.toLowerCase()}/rival/release; nothing is sent`,
    );
    expect(JSON.stringify(refused)).not.toContain(forge.admin.token);
    expect(await forge.commitStatuses(other, otherSha, rival)).toEqual([]);
  }, 240_000);
});
