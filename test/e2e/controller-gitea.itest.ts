import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { startGiteaServer, type GiteaServer, type GiteaUser } from '../harness/gitea-server.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  startController,
  installCrd,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';

// Issue #27, a real forge in the tests: the ApplySet's source is a private repository on Gitea, read
// with a Gitea user's token; a `git push` to Gitea reaches the controller through Gitea's own push
// webhook, signed by Gitea with the receiver's secret, and the new commit is applied at once (the
// interval is an hour). A hook signed with another secret is refused, and a wrong token is
// AuthenticationFailed.

const HOOK_SECRET = 'gitea-hook-s3cret';
const REQUESTED = 'applyset.dev/reconcile-requested-at';
const SOURCE_HOSTS = { 'applyset.dev/source-hosts': '127.0.0.1' };

describe('the controller with Gitea', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-gitea');
  let forge: GiteaServer;
  let deployer: GiteaUser;
  let controller: ControllerProcess;
  let hookUrl: string;

  const gitSecret = async (name: string, password: string) => {
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, annotations: SOURCE_HOSTS },
        stringData: { username: deployer.username, password },
      },
    });
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    forge = await startGiteaServer();
    deployer = await forge.createUser('deployer');
    await forge.createOrganization('platform', deployer);
    await gitSecret('gitea-token', deployer.token);
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'hooks' }, stringData: { gitea: HOOK_SECRET } },
    });
    controller = await startController({
      namespace,
      args: ['--webhook-addr', '127.0.0.1:0', '--webhook-secret', `${namespace}/hooks`],
    });
    const started = controller.logs.find((line) => line['msg'] === 'controller started');
    hookUrl = `http://127.0.0.1:${String(started?.['webhookPort'])}/hook/gitea`;
  });

  afterAll(async () => {
    await stopAllControllers();
    await forge?.close();
  });

  it("applies a commit pushed to a private Gitea repository at once, on Gitea's own signed webhook", async () => {
    const repository = await forge.createRepository('platform', 'site', deployer);
    const first = await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('site', { v: '1' }) });
    await createApplySet(c, namespace, 'site', {
      url: repository.cloneUrl,
      secretName: 'gitea-token',
      interval: '1h',
    });
    await waitForAppliedCommit(c, namespace, 'site', first, 60_000);
    await forge.addWebhook(repository, hookUrl, HOOK_SECRET, deployer);

    const pushedAt = Date.now();
    const second = await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('site', { v: '2' }) });
    // The interval is an hour: only the webhook can bring the new commit in this time.
    await waitForAppliedCommit(c, namespace, 'site', second, 30_000);
    const latencyMs = Date.now() - pushedAt;
    expect(await configMapData(c, namespace, 'site')).toEqual({ v: '2' });
    const received = controller.logs.find((line) => line['msg'] === 'webhook: push received');
    expect(received).toMatchObject({ receiver: 'gitea', provider: 'gitea', branch: 'main', matched: 1 });
    expect(latencyMs).toBeLessThan(30_000);
  });

  it('refuses the webhook of a Gitea hook signed with another secret, and applies nothing', async () => {
    const repository = await forge.createRepository('platform', 'forged', deployer);
    const first = await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('forged', { v: '1' }) });
    await createApplySet(c, namespace, 'forged', {
      url: repository.cloneUrl,
      secretName: 'gitea-token',
      interval: '1h',
    });
    await waitForAppliedCommit(c, namespace, 'forged', first, 60_000);
    const before = (await getApplySet(c, namespace, 'forged'))?.metadata.annotations?.[REQUESTED];
    await forge.addWebhook(repository, hookUrl, 'not-the-receivers-secret', deployer);

    await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('forged', { v: '2' }) });
    await waitFor('the controller to refuse the badly signed hook', async () =>
      controller.logs.find(
        (line) => String(line['msg']).startsWith('webhook: bad signature') && line['provider'] === 'gitea',
      ),
    );
    const after = await getApplySet(c, namespace, 'forged');
    expect(after?.metadata.annotations?.[REQUESTED]).toBe(before);
    expect(after?.status?.lastAppliedRevision).toBe(`main@sha1:${first}`);
    expect(await configMapData(c, namespace, 'forged')).toEqual({ v: '1' });
  });

  it('stalls a Gitea source read with a wrong token as AuthenticationFailed, without showing it', async () => {
    const repository = await forge.createRepository('platform', 'locked', deployer);
    await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('locked', { v: '1' }) });
    await gitSecret('wrong-token', 'not-a-gitea-token');
    await createApplySet(c, namespace, 'locked', {
      url: repository.cloneUrl,
      secretName: 'wrong-token',
      interval: '1h',
    });
    const view = await waitForReady(c, namespace, 'locked', 'False', undefined, 60_000);
    expect(condition(view, 'Ready')?.reason).toBe('AuthenticationFailed');
    expect(condition(view, 'Ready')?.message).toContain(`authentication failed for ${repository.cloneUrl}`);
    expect(JSON.stringify(view)).not.toContain('not-a-gitea-token');
    expect(await configMapData(c, namespace, 'locked')).toBeUndefined();
  });
});
