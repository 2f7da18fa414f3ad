import { randomBytes } from 'node:crypto';
import { uniqueName } from '../harness/test-cluster.js';
import type { GitTestServer } from '../harness/git-server.js';
import {
  GROUP,
  cluster,
  configMapYaml,
  createApplySet,
  getApplySet,
  kubectl,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { metricsLines } from './controller-metrics.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';
import {
  createNotification,
  signedWith,
  slackShape,
  startReceiver,
  statesOf,
  type TestReceiver,
} from './notification-receivers.js';

// Issue #27: an ApplySet tells chat and webhooks what happened to it, once per change of state, in
// the background: a receiver that is slow or down never slows a reconcile.

const HMAC_KEY = 'k3y-of-the-audit-hook';

describe('notifications', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-notify');
  let git: GitTestServer | undefined;
  let controller: ControllerProcess | undefined;
  const receivers: TestReceiver[] = [];

  const receiverSecret = async (name: string, address: string, extra: Record<string, string> = {}) => {
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { address, ...extra },
      },
    });
  };
  const notification = (name: string, type: string, secret: string, applySets: string[]) =>
    createNotification(c, namespace, name, { type, secret }, applySets);
  /** Reconciles of the ApplySet the controller has ended so far (one log line each). */
  const runsOf = (name: string) =>
    (controller?.logs ?? []).filter(
      (line) =>
        line['applyset'] === `${namespace}/${name}` &&
        typeof line['msg'] === 'string' &&
        /^(not )?reconciled/.test(line['msg']),
    ).length;
  const afterRuns = (name: string, runs: number) =>
    waitFor(
      `${runs} more reconciles of ${name}`,
      async () => (runsOf(name) >= runs ? true : undefined),
      30_000,
    );

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'web/app.yaml': configMapYaml('web-config', { k: 'v1' }),
      'quiet/app.yaml': configMapYaml('quiet-config', { k: 'v1' }),
      'loud/app.yaml': configMapYaml('loud-config', { k: 'v1' }),
      'tenant/app.yaml': configMapYaml('tenant-config', { k: 'v1' }),
      'late/app.yaml': configMapYaml('late-config', { k: 'v1' }),
    }));
    await kubectl([
      'wait',
      '--for',
      'condition=Established',
      '--timeout',
      '60s',
      `crd/notifications.${GROUP}`,
    ]);
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('sends one message per change of state to Slack and to a signed webhook: applied, failed, recovered', async () => {
    const slack = await startReceiver({ check: slackShape });
    const audit = await startReceiver({ check: signedWith(HMAC_KEY) });
    receivers.push(slack, audit);
    await receiverSecret('slack-hook', slack.url);
    await receiverSecret('audit-hook', audit.url, { hmacKey: HMAC_KEY });
    await notification('chat', 'slack', 'slack-hook', ['web']);
    await notification('audit', 'webhook', 'audit-hook', ['web']);
    const server = git as GitTestServer;
    await createApplySet(c, namespace, 'web', { url: server.url, path: 'web', interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'web', await server.revParse('main'));
    const expectOneEach = async (states: string[]) => {
      for (const receiver of [slack, audit]) {
        await waitFor(`${states.join(', ')}`, async () =>
          statesOf(receiver).length >= states.length ? true : undefined,
        );
      }
      // Three more intervals of the same state send nothing more.
      await afterRuns('web', runsOf('web') + 3);
      expect(statesOf(slack)).toEqual(states);
      expect(statesOf(audit)).toEqual(states);
    };
    await expectOneEach(['applied']);

    // A name the API server refuses: the apply fails, and is retried on every interval.
    const broken = await server.writeFiles({ 'web/bad.yaml': configMapYaml('Not_A_Valid_Name', { k: 'v' }) });
    await waitForReady(
      c,
      namespace,
      'web',
      'False',
      (v) => v.status?.lastAttemptedRevision === `main@sha1:${broken}`,
    );
    await expectOneEach(['applied', 'failed']);

    await server.deleteFiles(['web/bad.yaml']);
    await waitForAppliedCommit(c, namespace, 'web', await server.revParse('main'));
    await expectOneEach(['applied', 'failed', 'recovered']);

    // What the webhook carries, verified with the key: the objects and the error of the failure.
    const failed = JSON.parse(audit.received[1]?.body ?? '{}') as { reason?: string; details?: string[] };
    expect(failed.details?.join('\n')).toContain('Not_A_Valid_Name');
    expect(slack.refused).toEqual([]);
    expect(audit.refused).toEqual([]);
  });

  // The controller watches Notifications rather than listing them on each change of state: one made
  // after its ApplySet became Ready is seen, and told the next change.
  it('tells a Notification created after its ApplySet became Ready of the next change', async () => {
    const server = git as GitTestServer;
    await createApplySet(c, namespace, 'late', { url: server.url, path: 'late', interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'late', await server.revParse('main'));
    const chat = await startReceiver({ check: slackShape });
    receivers.push(chat);
    await receiverSecret('late-hook', chat.url);
    await notification('late-chat', 'slack', 'late-hook', ['late']);
    const broken = await server.writeFiles({
      'late/bad.yaml': configMapYaml('Not_Valid_Either', { k: 'v' }),
    });
    await waitForReady(
      c,
      namespace,
      'late',
      'False',
      (v) => v.status?.lastAttemptedRevision === `main@sha1:${broken}`,
    );
    await waitFor('the failure told', async () => (statesOf(chat).includes('failed') ? true : undefined));
    expect(statesOf(chat)).toEqual(['failed']);
    await server.deleteFiles(['late/bad.yaml']);
  });

  it('a slow or dead receiver leaves reconcile latency unchanged; its messages are retried, then dropped', async () => {
    const slow = await startReceiver({ delayMs: 10_000 });
    const dead = await startReceiver();
    receivers.push(slow);
    await dead.close();
    await receiverSecret('slow-hook', slow.url);
    await receiverSecret('dead-hook', dead.url);
    await notification('slow', 'slack', 'slow-hook', ['loud']);
    await notification('dead', 'slack', 'dead-hook', ['loud']);
    const server = git as GitTestServer;
    for (const name of ['quiet', 'loud']) {
      await createApplySet(c, namespace, name, { url: server.url, path: name, interval: '1h' });
    }
    const latency = async (name: string): Promise<number> => {
      const asked = `${Date.now()}-${randomBytes(3).toString('hex')}`;
      const started = performance.now();
      await patchApplySet(namespace, name, {
        metadata: { annotations: { 'applyset.dev/reconcile-requested-at': asked } },
      });
      await waitFor(`reconcile ${asked} of ${name}`, async () =>
        (await getApplySet(c, namespace, name))?.status?.lastHandledReconcileAt === asked ? true : undefined,
      );
      return performance.now() - started;
    };
    const quiet: number[] = [];
    const loud: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      // A new commit each time: a new revision is a new message for the loud set's receivers.
      await server.writeFiles({ [`loud/round-${i}.yaml`]: configMapYaml(`round-${i}`, { i: String(i) }) });
      quiet.push(await latency('quiet'));
      loud.push(await latency('loud'));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] ?? 0;
    // Sending in the reconcile would add the slow receiver's 10 s to every loud run.
    expect(median(loud)).toBeLessThan(median(quiet) + 2000);

    const notifications = async (result: string) => {
      const line = (await metricsLines(controller as ControllerProcess)).find((l) =>
        l.startsWith(`applyset_notifications_total{result="${result}"}`),
      );
      return Number(line?.split(' ')[1] ?? 0);
    };
    // The dead receiver: every message tried 4 times (1 s, 2 s, 4 s apart), then dropped.
    await waitFor(
      'a dropped notification',
      async () => ((await notifications('dropped')) >= 1 ? true : undefined),
      30_000,
    );
    expect(await notifications('retried')).toBeGreaterThanOrEqual(3);
    expect(slow.received.length).toBeGreaterThanOrEqual(1);
  });

  it("a tenant's Notification cannot send a Secret its account may not get", async () => {
    const leak = await startReceiver();
    receivers.push(leak);
    await createTenantAccount(c, namespace, 'no-secrets', [coreRule('configmaps')]);
    await receiverSecret('platform-hook', leak.url);
    await notification('leaky', 'slack', 'platform-hook', ['tenant']);
    const server = git as GitTestServer;
    await createApplySet(c, namespace, 'tenant', {
      url: server.url,
      path: 'tenant',
      serviceAccountName: 'no-secrets',
    });
    await waitForReady(c, namespace, 'tenant', 'True');
    const refusal = `the ApplySet's account may not get Secret ${namespace}/platform-hook (spec.provider.secretRef of Notification leaky); nothing was sent`;
    const refused = () => controller?.logs.some((line) => line['msg'] === refusal) === true;
    // Either the refusal or a message that leaked, whichever comes first.
    await waitFor('the refusal in the log, or a message', async () =>
      refused() || leak.received.length > 0 ? true : undefined,
    );
    expect(leak.received).toEqual([]);
    expect(refused()).toBe(true);
  });
});
