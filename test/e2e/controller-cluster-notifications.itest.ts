import * as k8s from '@kubernetes/client-node';
import { kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import {
  GROUP,
  VERSION,
  applySetBody,
  cluster,
  configMapYaml,
  installCrd,
  kubectl,
  kubectlApply,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import type { GitTestServer } from '../harness/git-server.js';
import { GitServerPool } from './git-server-pool.js';
import { metricsLines } from './controller-metrics.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';
import { slackShape, startReceiver, type TestReceiver } from './notification-receivers.js';

// Issue #27: the platform team's channel. A ClusterNotification (cluster-scoped) selects ApplySets of
// every namespace labelled team=a; its Secret is in the controller's own namespace and read as the
// controller, with exactly the RBAC the chart renders. A tenant cannot make one.

describe('ClusterNotification', () => {
  const c = cluster();
  const shard = uniqueName('cn');
  const teamA1 = uniqueName('team-a1');
  const teamA2 = uniqueName('team-a2');
  const plain = uniqueName('plain');
  const servers = new GitServerPool();
  const receivers: TestReceiver[] = [];
  const clusterNotifications: string[] = [];
  let controller: LockedDownController | undefined;
  let git: GitTestServer | undefined;
  let forge: TestReceiver;
  let forgeNotification = '';
  const counted = async (result: string) => {
    const lines = await metricsLines((controller as LockedDownController).process);
    const line = lines.find((l) => l.startsWith(`applyset_notifications_total{result="${result}"}`));
    return Number(line?.split(' ')[1] ?? 0);
  };
  const requestReconcile = (namespace: string, token: string) =>
    kubectl([
      'annotate',
      '--overwrite',
      '-n',
      namespace,
      `applysets.${GROUP}/app`,
      `applyset.dev/reconcile-requested-at=${token}`,
    ]);

  /** The ApplySets a Slack-shaped receiver was told about, as `namespace/name: state`. */
  const toldAbout = (receiver: TestReceiver) =>
    receiver.received.map(({ body }) => {
      const text = (JSON.parse(body) as { text: string }).text;
      return /^ApplySet (\S+): (\w+)/.exec(text)?.slice(1, 3).join(': ') ?? text;
    });

  const clusterNotification = async (spec: Record<string, unknown>): Promise<void> => {
    const name = uniqueName('platform');
    clusterNotifications.push(name);
    await c.custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'clusternotifications',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'ClusterNotification', metadata: { name }, spec },
    });
  };

  beforeAll(async () => {
    await installCrd();
    for (const namespace of [teamA1, teamA2, plain]) {
      const labels: Record<string, string> = namespace === plain ? {} : { team: 'a' };
      await c.core.createNamespace({ body: { metadata: { name: namespace, labels } } });
      await createTenantAccount(c, namespace, DEFAULT_ACCOUNT, [coreRule('configmaps')]);
    }
    controller = await startLockedDownController({
      namespace: undefined,
      values: {
        watchLabelSelector: `applyset.dev/e2e-shard in (${shard})`,
        'notifications.clusterSecretNames[0]': 'platform-hook',
        'notifications.clusterSecretNames[1]': 'control-hook',
        'notifications.clusterSecretNames[2]': 'forge-hook',
        'notifications.clusterSecretNames[3]': 'stuck-hook',
      },
    });
  });

  afterAll(async () => {
    for (const name of clusterNotifications) {
      await kubectl(['delete', '--ignore-not-found', `clusternotifications.${GROUP}/${name}`]);
    }
    await stopControllersAndGit(servers);
    await controller?.cleanup();
    await Promise.all(receivers.map((r) => r.close()));
  });

  beforeAll(async () => {
    forge = await startReceiver();
  });

  it('tells the platform about the ApplySets of every namespace labelled team=a, and of no other', async () => {
    const platform = await startReceiver({ check: slackShape });
    const control = await startReceiver({ check: slackShape });
    receivers.push(platform, control, forge);
    // The controller's namespace: where the chart's Role lets it get platform-hook, and nothing else.
    const controllerNamespace = (controller as LockedDownController).user.split(':')[2] ?? '';
    for (const [name, address] of [
      ['platform-hook', platform.url],
      ['control-hook', control.url],
      ['forge-hook', forge.url],
    ] as const) {
      await c.core.createNamespacedSecret({
        namespace: controllerNamespace,
        body: {
          metadata: { name, annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
          stringData: { address },
        },
      });
    }
    await clusterNotification({
      namespaces: { matchLabels: { team: 'a' } },
      provider: { type: 'slack', secretRef: { name: 'platform-hook' } },
    });
    // A second one, by namespace name, hears of the unlabelled namespace: once it has, that ApplySet's
    // outcome went past every ClusterNotification, and the first one had its chance to take it.
    await clusterNotification({
      namespaces: { names: [plain] },
      provider: { type: 'slack', secretRef: { name: 'control-hook' } },
    });
    // A commit status for ApplySets whose source (the harness's http://127.0.0.1:<port>/repo.git)
    // names no owner/repository: nothing to mark.
    await clusterNotification({
      namespaces: { names: [plain] },
      provider: { type: 'github', secretRef: { name: 'forge-hook' } },
    });
    forgeNotification = clusterNotifications.at(-1) ?? '';
    git = await servers.start({ files: { 'app.yaml': configMapYaml('app-config', { k: 'v' }) } });
    const url = git.url;
    const labelled = (namespace: string) => {
      const body = applySetBody(namespace, 'app', { url, interval: '1h' }) as {
        metadata: Record<string, unknown>;
      };
      body.metadata['labels'] = { 'applyset.dev/e2e-shard': shard };
      return JSON.stringify(body);
    };
    await kubectlApply([teamA1, teamA2, plain].map(labelled).join('\n'));

    await waitFor('the platform told about both team=a ApplySets', async () =>
      platform.received.length >= 2 ? true : undefined,
    );
    await waitFor('the control told about the unlabelled one', async () =>
      control.received.length >= 1 ? true : undefined,
    );
    expect(toldAbout(platform).sort()).toEqual([`${teamA1}/app: applied`, `${teamA2}/app: applied`].sort());
    expect(toldAbout(control)).toEqual([`${plain}/app: applied`]);
    expect(platform.refused).toEqual([]);
    // What it sent is kept in its own status, so a restarted controller does not send it again.
    const platformName = clusterNotifications[0] ?? '';
    const lastSent = await waitFor('the platform ClusterNotification records what it sent', async () => {
      const object = (await c.custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'clusternotifications',
        name: platformName,
      })) as { status?: { lastSent?: Record<string, { state?: string }> } };
      const sent = object.status?.lastSent ?? {};
      return Object.keys(sent).length >= 2 ? sent : undefined;
    });
    expect(
      Object.entries(lastSent)
        .map(([key, entry]) => `${key}: ${entry.state}`)
        .sort(),
    ).toEqual([`${teamA1}/app/sync: applied`, `${teamA2}/app/sync: applied`].sort());
  });

  it('a commit status for an ApplySet whose source names no repository sends nothing, and warns once', async () => {
    const warning = (line: Record<string, unknown>) =>
      line['notification'] === `ClusterNotification/${forgeNotification}` &&
      line['applySet'] === `${plain}/app`;
    const logs = (controller as LockedDownController).process.logs;
    await waitFor('the warning about the forge ClusterNotification', async () =>
      logs.some(warning) ? true : undefined,
    );
    expect(String(logs.find(warning)?.['msg'])).toContain('a github commit status needs a repository');
    // A new revision: another change of state, which the forge one counts filtered, with no new warning.
    const filtered = () => counted('filtered');
    const before = await filtered();
    await (git as GitTestServer).writeFiles({ 'more.yaml': configMapYaml('more-config', { k: 'v' }) });
    await requestReconcile(plain, shard);
    await waitFor('the forge ClusterNotification to filter the new revision', async () =>
      (await filtered()) > before ? true : undefined,
    );
    expect(logs.filter(warning)).toHaveLength(1);
    expect(forge.received).toEqual([]);
  });

  it('a deleted ClusterNotification loses its queue: what waited in it is dropped, not sent', async () => {
    // A receiver that never answers: the first message holds the queue, the next ones wait behind it.
    const stuck = await startReceiver({ delayMs: 600_000 });
    receivers.push(stuck);
    const controllerNamespace = (controller as LockedDownController).user.split(':')[2] ?? '';
    await c.core.createNamespacedSecret({
      namespace: controllerNamespace,
      body: {
        metadata: { name: 'stuck-hook', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { address: stuck.url },
      },
    });
    await clusterNotification({
      namespaces: { names: [teamA1] },
      provider: { type: 'slack', secretRef: { name: 'stuck-hook' } },
    });
    const doomed = clusterNotifications.at(-1) ?? '';
    const server = git as GitTestServer;
    const before = await counted('dropped');
    for (let round = 0; round < 3; round += 1) {
      const sha = await server.writeFiles({ [`round-${round}.yaml`]: configMapYaml(`round-${round}`, {}) });
      await requestReconcile(teamA1, `${shard}-${round}`);
      await waitForAppliedCommit(c, teamA1, 'app', sha);
    }
    await waitFor('the stuck receiver to hold the first message', async () =>
      stuck.received.length >= 1 ? true : undefined,
    );
    await kubectl(['delete', `clusternotifications.${GROUP}/${doomed}`]);
    // The next change of state in the namespace lists the ClusterNotifications again.
    const sha = await server.writeFiles({ 'round-3.yaml': configMapYaml('round-3', {}) });
    await requestReconcile(teamA1, `${shard}-3`);
    await waitForAppliedCommit(c, teamA1, 'app', sha);
    // The one under way (aborted) and the two waiting: dropped and counted.
    await waitFor('three dropped messages', async () =>
      (await counted('dropped')) >= before + 3 ? true : undefined,
    );
    // Only the message under way ever reached the receiver (a slow run may see it sent again, after the
    // dispatcher's timeout): none of those that waited behind it.
    expect(stuck.received.length).toBeGreaterThanOrEqual(1);
    expect(new Set(stuck.received.map((request) => request.body))).toEqual(
      new Set([stuck.received[0]?.body]),
    );
  });

  it('a tenant, even admin of its namespace, cannot create a ClusterNotification', async () => {
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRoleBinding({
      namespace: teamA1,
      body: {
        metadata: { name: 'tenant-admin' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ kind: 'ServiceAccount', name: DEFAULT_ACCOUNT, namespace: teamA1 }],
      },
    });
    const tenant = new k8s.KubeConfig();
    tenant.loadFromFile(await kubeconfigForServiceAccount(teamA1, DEFAULT_ACCOUNT));
    const custom = tenant.makeApiClient(k8s.CustomObjectsApi);
    const name = uniqueName('tenant-made');
    const attempt = custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'clusternotifications',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ClusterNotification',
        metadata: { name },
        spec: { provider: { type: 'slack', secretRef: { name: 'platform-hook' } } },
      },
    });
    await expect(attempt).rejects.toMatchObject({ code: 403 });
  });
});
