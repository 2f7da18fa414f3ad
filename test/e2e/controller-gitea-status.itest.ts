import { markDeploymentRolledOut } from '../apply/apply-test-kit.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { startGiteaServer, type GiteaServer, type GiteaUser } from '../harness/gitea-server.js';
import {
  GROUP,
  VERSION,
  cluster,
  condition,
  configMapYaml,
  createApplySet,
  installCrd,
  patchApplySet,
  startController,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import {
  createNotification,
  slackShape,
  startReceiver,
  statesOf,
  type TestReceiver,
} from './notification-receivers.js';

// Issue #27, commit statuses on a real forge: a push to Gitea reaches the controller through Gitea's
// own webhook, and Gitea's API shows the commit marked pending, then success; a broken manifest pushed
// next is marked failure with the reason. What each Notification sent is kept in its status, so a
// restarted controller neither posts the same status again nor repeats a chat message.

const HOOK_SECRET = 'gitea-status-hook-s3cret';
const SOURCE_HOSTS = { 'applyset.dev/source-hosts': '127.0.0.1' };
const CONTROLLER_ARGS = ['--cluster-name', 'e2e'];

describe('commit statuses on Gitea', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-gitea-status');
  let forge: GiteaServer;
  let deployer: GiteaUser;
  let controller: ControllerProcess;
  let chat: TestReceiver;
  let hookUrl: string;

  const secret = (
    name: string,
    stringData: Record<string, string>,
    annotations: Record<string, string> = SOURCE_HOSTS,
  ) => c.core.createNamespacedSecret({ namespace, body: { metadata: { name, annotations }, stringData } });
  const notification = (name: string, type: string, secretName: string) =>
    createNotification(c, namespace, name, { type, secret: secretName }, ['site', 'waits']);
  const lastSent = async (name: string) => {
    const object = (await c.custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'notifications',
      name,
    })) as { status?: { lastSent?: Record<string, { state: string; revision: string }> } };
    return object.status?.lastSent ?? {};
  };
  const start = async () => {
    controller = await startController({
      namespace,
      args: [...CONTROLLER_ARGS, '--webhook-addr', '127.0.0.1:0', '--webhook-secret', `${namespace}/hooks`],
    });
    const started = controller.logs.find((line) => line['msg'] === 'controller started');
    return `http://127.0.0.1:${String(started?.['webhookPort'])}/hook/gitea`;
  };
  // Each wait below ends at the outcome's mark (success or failure), then the whole list is checked.
  /** The statuses of our context on `sha`, oldest first, as `state: description`. */
  const statusesOf = async (
    repository: Parameters<GiteaServer['commitStatuses']>[0],
    sha: string,
    applySet = 'site',
  ) =>
    (await forge.commitStatuses(repository, sha, deployer))
      .filter((status) => status.context === `applyset/e2e/${namespace}/${applySet}`)
      .sort((a, b) => a.id - b.id)
      .map((status) => ({ state: status.status, description: status.description }));
  const runsOf = () =>
    controller.logs.filter(
      (line) =>
        line['applyset'] === `${namespace}/site` &&
        typeof line['msg'] === 'string' &&
        /^(not )?reconciled/.test(line['msg']),
    ).length;
  const moreRuns = (runs: number) => {
    const until = runsOf() + runs;
    return waitFor(`${runs} more reconciles`, async () => (runsOf() >= until ? true : undefined), 60_000);
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    forge = await startGiteaServer();
    chat = await startReceiver({ check: slackShape });
    deployer = await forge.createUser('deployer');
    await forge.createOrganization('platform', deployer);
    await secret('gitea-token', { username: deployer.username, password: deployer.token });
    await secret('gitea-api', { address: forge.url, token: deployer.token });
    await secret('chat-hook', { address: chat.url });
    await secret('hooks', { gitea: HOOK_SECRET }, {});
    await notification('forge', 'gitea', 'gitea-api');
    await notification('chat', 'slack', 'chat-hook');
    hookUrl = await start();
  });

  afterAll(async () => {
    await stopAllControllers();
    await chat?.close();
    await forge?.close();
  });

  it('marks a commit pushed through the webhook pending, then success; a broken one failure, once, across a restart', async () => {
    const repository = await forge.createRepository('platform', 'site', deployer);
    const first = await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('site', { v: '1' }) });
    await createApplySet(c, namespace, 'site', {
      url: repository.cloneUrl,
      secretName: 'gitea-token',
      interval: '1h',
    });
    await waitForAppliedCommit(c, namespace, 'site', first, 60_000);
    await forge.addWebhook(repository, hookUrl, HOOK_SECRET, deployer);

    // The interval is an hour: only Gitea's webhook brings the new commit in.
    const second = await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('site', { v: '2' }) });
    await waitForAppliedCommit(c, namespace, 'site', second, 30_000);
    const marked = await waitFor('pending then success on the pushed commit', async () => {
      const statuses = await statusesOf(repository, second);
      return statuses.some((status) => status.state !== 'pending') ? statuses : undefined;
    });
    expect(marked.map((status) => status.state)).toEqual(['pending', 'success']);
    expect(marked[0]?.description).toContain(`applying revision main@sha1:${second}`);

    // A name the API server refuses: the run fails on that object, and retries on its own.
    const broken = await forge.push(repository, deployer, {
      'cm.yaml': configMapYaml('Not_A_Valid_Name', { v: '3' }),
    });
    const failed = await waitForReady(
      c,
      namespace,
      'site',
      'False',
      (view) => condition(view, 'Ready')?.message?.includes('Not_A_Valid_Name') === true,
    );
    const reason = condition(failed, 'Ready')?.reason ?? '';
    const failure = await waitFor('pending then failure on the broken commit', async () => {
      const statuses = await statusesOf(repository, broken);
      return statuses.some((status) => status.state !== 'pending') ? statuses : undefined;
    });
    expect(failure.map((status) => status.state)).toEqual(['pending', 'failure']);
    expect(failure[1]?.description).toMatch(new RegExp(`^${reason}: .*Not_A_Valid_Name`));

    // Retried on every retry interval, told once.
    await moreRuns(3);
    await waitFor('the failure recorded in the Notifications', async () => {
      const [forgeSent, chatSent] = [await lastSent('forge'), await lastSent('chat')];
      const mark = `${namespace}/site/sync`;
      return forgeSent[mark]?.state === 'failed' && chatSent[mark]?.state === 'failed' ? true : undefined;
    });
    expect(await statusesOf(repository, broken)).toHaveLength(2);
    expect(statesOf(chat)).toEqual(['applied', 'applied', 'failed']);

    // A restart, the set still failing: nothing is posted again, though it runs and fails again.
    await controller.stop();
    await start();
    await moreRuns(3);
    expect(await statusesOf(repository, broken)).toHaveLength(2);
    expect(statesOf(chat)).toEqual(['applied', 'applied', 'failed']);

    // A new state after the restart is one message, and one mark: the recovery.
    const fixed = await forge.push(repository, deployer, { 'cm.yaml': configMapYaml('site', { v: '4' }) });
    await patchApplySet(namespace, 'site', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'fixed' } },
    });
    await waitForAppliedCommit(c, namespace, 'site', fixed, 30_000);
    await waitFor('the recovery told', async () => (statesOf(chat).length >= 4 ? true : undefined));
    expect(statesOf(chat)).toEqual(['applied', 'applied', 'failed', 'recovered']);
    const recovered = await waitFor('pending then success on the fixed commit', async () => {
      const statuses = await statusesOf(repository, fixed);
      return statuses.some((status) => status.state !== 'pending') ? statuses : undefined;
    });
    expect(recovered.map((status) => status.state)).toEqual(['pending', 'success']);
    expect(chat.refused).toEqual([]);
  });

  it("forgets a deleted ApplySet in its Notifications' status", async () => {
    const mark = `${namespace}/site/sync`;
    expect(Object.keys(await lastSent('forge'))).toContain(mark);
    await c.custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'applysets',
      name: 'site',
    });
    await waitFor('the entries of the deleted ApplySet removed', async () => {
      const names = [...Object.keys(await lastSent('forge')), ...Object.keys(await lastSent('chat'))];
      return names.some((key) => key.startsWith(`${namespace}/site/`)) ? undefined : names;
    });
  });

  it('keeps the commit pending through the health wait, then failure on its timeout and success once healthy', async () => {
    const repository = await forge.createRepository('platform', 'waits', deployer);
    const sha = await forge.push(repository, deployer, { 'deploy.yaml': deploymentYaml(namespace) });
    await createApplySet(c, namespace, 'waits', {
      url: repository.cloneUrl,
      secretName: 'gitea-token',
      interval: '1h',
      suspend: true,
    });
    // Long enough that fetch and apply fit in it on a loaded machine: the wait is what must time out.
    await patchApplySet(namespace, 'waits', { spec: { suspend: false, wait: true, timeout: '20s' } });
    await waitForReady(
      c,
      namespace,
      'waits',
      'Unknown',
      (view) => condition(view, 'Ready')?.reason === 'Progressing',
    );
    const waiting = await waitFor('the pending mark during the wait', async () => {
      const statuses = await statusesOf(repository, sha, 'waits');
      return statuses.length > 0 ? statuses : undefined;
    });
    expect(waiting.map((status) => status.state)).toEqual(['pending']);

    await waitForReady(
      c,
      namespace,
      'waits',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'HealthCheckFailed',
      60_000,
    );
    const timedOut = await waitFor('the failure mark of the timeout', async () => {
      const statuses = await statusesOf(repository, sha, 'waits');
      return statuses.some((status) => status.state !== 'pending') ? statuses : undefined;
    });
    expect(timedOut.map((status) => status.state)).toEqual(['pending', 'failure']);
    expect(timedOut[1]?.description).toMatch(/^HealthCheckFailed: /);

    // Healthy on a retry of the same revision: success, without a second pending mark.
    await markDeploymentRolledOut(namespace, 'web', 1);
    await waitForReady(c, namespace, 'waits', 'True', undefined, 60_000);
    const healthy = await waitFor('the success mark', async () => {
      const statuses = await statusesOf(repository, sha, 'waits');
      return statuses.some((status) => status.state === 'success') ? statuses : undefined;
    });
    expect(healthy.map((status) => status.state)).toEqual(['pending', 'failure', 'success']);
  });
});

/** A Deployment no workload controller rolls out here: the test writes its status. */
function deploymentYaml(namespace: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx:1.27 }] }
`;
}
