import { randomBytes } from 'node:crypto';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  GROUP,
  cluster,
  configMapYaml,
  createApplySet,
  installCrd,
  kubectl,
  startController,
  stopAllControllers,
  waitFor,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { metricsLines } from './controller-metrics.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';
import {
  createNotification,
  signedWith,
  startReceiver,
  type TestReceiver,
} from './notification-receivers.js';

// Issue #27: a notification's credentials (the address, often a credential itself, its token and its
// HMAC key) come from Secrets and are never logged. Looked at as an attacker would: with the controller
// logging at debug, receivers that take, refuse (500), are down or speak no TLS, a forge, an address
// with a password, one whose host the Secret does not allow, and a Secret the account may not get,
// none of the values, their base64 or any eight characters of them is in the log, an ApplySet's
// status or Events, a Notification's status or /metrics.

/** A value no log line could hold by chance. */
const secretValue = (label: string) => `${label}${randomBytes(12).toString('base64url')}`;

const SECRETS = {
  slackPath: secretValue('S'),
  teamsPath: secretValue('T'),
  discordPath: secretValue('D'),
  webhookToken: secretValue('W'),
  hmacKey: secretValue('H'),
  alertToken: secretValue('A'),
  forgePath: secretValue('G'),
  forgeToken: secretValue('F'),
  password: secretValue('P'),
  wrongHostPath: secretValue('X'),
  forbiddenPath: secretValue('N'),
};

/** Each value, its base64, and every eight characters of it: a quoted fragment counts as a leak. */
const FORBIDDEN = Object.values(SECRETS).flatMap((value) => [
  Buffer.from(value).toString('base64'),
  ...Array.from({ length: value.length - 7 }, (_, i) => value.slice(i, i + 8)),
]);

describe('no notification credential reaches logs, status, Events or metrics', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-notify-hygiene');
  let git: GitTestServer | undefined;
  let controller: ControllerProcess;
  const receivers: TestReceiver[] = [];
  // What it writes to stderr too (an uncaught error's stack, a warning of node's), from its start on.
  let stderr = '';

  const hookSecret = async (name: string, data: Record<string, string>, hosts = '127.0.0.1') => {
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name, annotations: { 'applyset.dev/source-hosts': hosts } }, stringData: data },
    });
  };
  const linesAbout = (name: string) =>
    controller.logs.filter((line) => line['notification'] === `${namespace}/${name}`);

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    git = await startGitServer({
      repositoryName: 'team/app.git',
      files: {
        'app/app.yaml': configMapYaml('app-config', { k: 'v1' }),
        'tenant/app.yaml': configMapYaml('tenant-config', { k: 'v1' }),
      },
    });
    controller = await startController({
      namespace,
      env: { LOG_LEVEL: 'debug' },
      args: ['--notification-attempts', '2'],
    });
    controller.child.stderr?.on('data', (chunk: string) => (stderr += chunk));
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
    await stopAllControllers();
    await git?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('keeps every address, token and key out of what a tenant or an operator can read', async () => {
    const failing = await startReceiver({ status: 500 });
    const taking = await startReceiver({ check: signedWith(SECRETS.hmacKey) });
    const plain = await startReceiver();
    const down = await startReceiver();
    await down.close();
    receivers.push(failing, taking, plain);
    const at = (receiver: TestReceiver, path: string, scheme = 'http') =>
      `${scheme}://${new URL(receiver.url).host}${path}`;

    const notifications: [string, string, Record<string, string>][] = [
      ['slack', 'slack', { address: at(failing, `/services/T0/B0/${SECRETS.slackPath}`) }],
      ['teams', 'msteams', { address: at(down, `/webhookb2/${SECRETS.teamsPath}`) }],
      // An https address on a plain HTTP receiver: the TLS handshake fails.
      ['discord', 'discord', { address: at(plain, `/api/webhooks/1/${SECRETS.discordPath}`, 'https') }],
      [
        'audit',
        'webhook',
        { address: at(taking, '/hook'), token: SECRETS.webhookToken, hmacKey: SECRETS.hmacKey },
      ],
      ['alerts', 'alertmanager', { address: at(failing, ''), token: SECRETS.alertToken }],
      ['forge', 'github', { address: at(failing, `/api/${SECRETS.forgePath}`), token: SECRETS.forgeToken }],
      // fetch refuses a URL with credentials, quoting it in its message.
      ['userinfo', 'slack', { address: at(plain, '/x').replace('//', `//deploy:${SECRETS.password}@`) }],
    ];
    for (const [name, type, data] of notifications) {
      await hookSecret(`${name}-hook`, data);
      await createNotification(c, namespace, name, { type, secret: `${name}-hook` }, ['app']);
    }
    await hookSecret(
      'wrong-host-hook',
      { address: at(plain, `/services/${SECRETS.wrongHostPath}`) },
      'example.org',
    );
    await createNotification(c, namespace, 'wrong-host', { type: 'slack', secret: 'wrong-host-hook' }, [
      'app',
    ]);
    await createTenantAccount(c, namespace, 'no-secrets', [coreRule('configmaps')]);
    await hookSecret('forbidden-hook', { address: at(plain, `/services/${SECRETS.forbiddenPath}`) });
    await createNotification(c, namespace, 'forbidden', { type: 'slack', secret: 'forbidden-hook' }, [
      'tenant',
    ]);

    const server = git as GitTestServer;
    await createApplySet(c, namespace, 'app', { url: server.url, path: 'app' });
    await createApplySet(c, namespace, 'tenant', {
      url: server.url,
      path: 'tenant',
      serviceAccountName: 'no-secrets',
    });
    await waitForReady(c, namespace, 'app', 'True');
    await waitForReady(c, namespace, 'tenant', 'True');

    // Every failing receiver has given up (its errors logged), the others were told or refused.
    for (const name of ['slack', 'teams', 'discord', 'alerts', 'forge']) {
      await waitFor(`${name}: dropped after its attempts`, async () =>
        linesAbout(name).some((line) => String(line['msg']).startsWith('dropped after')) ? true : undefined,
      );
    }
    // An address with a password in it is refused by the outbound door before anything is sent; what
    // matters here is that the password reaches none of the haystacks below.
    for (const name of ['wrong-host', 'forbidden']) {
      await waitFor(`${name}: refused`, async () => (linesAbout(name).length > 0 ? true : undefined));
    }
    await waitFor('the signed webhook told', async () => (taking.received.length > 0 ? true : undefined));
    expect(taking.refused).toEqual([]);
    expect(plain.received).toEqual([]);
    const notificationsJson = await waitFor('the webhook recorded in its status', async () => {
      const text = await kubectl(['get', 'notifications', '-n', namespace, '-o', 'json']);
      return text.includes('lastSent') ? text : undefined;
    });

    const haystacks: Record<string, string> = {
      logs: controller.logs.map((line) => JSON.stringify(line)).join('\n'),
      stderr,
      'ApplySets and their status': await kubectl(['get', 'applysets', '-n', namespace, '-o', 'json']),
      events: await kubectl(['get', 'events', '-n', namespace, '-o', 'json']),
      'Notifications and their status': notificationsJson,
      metrics: (await metricsLines(controller)).join('\n'),
    };
    // The most verbose lines it writes are in the haystack, and the failures were counted.
    expect(haystacks['logs']).toMatch(/"level":20/);
    expect(haystacks['metrics']).toMatch(/applyset_notifications_total\{result="dropped"\} [1-9]/);
    const leaks = Object.entries(haystacks).flatMap(([where, text]) =>
      FORBIDDEN.filter((marker) => text.includes(marker)).map((marker) => `${marker} in ${where}`),
    );
    expect(leaks).toEqual([]);
    // Each failure is logged, saying why: the status, or the network error's code.
    const why = {
      slack: 'answered HTTP 500',
      teams: 'ECONNREFUSED',
      discord: 'EPROTO',
      alerts: 'answered HTTP 500',
      forge: 'answered HTTP 500',
    };
    for (const [name, problem] of Object.entries(why)) {
      expect(linesAbout(name).map((line) => line['msg'])).toContain(
        `dropped after 2 attempt(s): notification to ${namespace}/${name} failed: ${problem}`,
      );
    }
  });
});
