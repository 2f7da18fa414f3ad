import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  GROUP,
  VERSION,
  condition,
  configMapYaml,
  createApplySet,
  installCrd,
  cluster,
  waitFor,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { createNotification } from './notification-receivers.js';
import {
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Issue #33, findings 3 and 4, as a tenant of a default install (the chart's RBAC and arguments):
// 3. a kubeconfig naming the tenant's own server, whose `/version` answers 600 MiB, made the controller
//    buffer the body whole until it died; now the answer is read up to its bound and the ApplySet stalls.
// 4. a webhook Notification whose address is an internal admin endpoint on loopback POSTed there with a
//    tenant-chosen Bearer token; now nothing is sent and the Notification's status says it was refused.

const MiB = 1024 * 1024;
const ADMIN_PATH = '/internal/admin/purge?confirm=yes';
// The account the chart's defaults apply as (tenancy.defaultServiceAccount empty) and may impersonate.
const ACCOUNT = 'applyset-deployer';

async function peakRssOf(controller: ControllerProcess): Promise<number> {
  const status = await readFile(`/proc/${controller.child.pid}/status`, 'utf8');
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmHWM in /proc/${controller.child.pid}/status`);
  return Number(kib) * 1024;
}

describe("the controller's one outbound door, as a tenant of a default install", () => {
  const c = cluster();
  const attacker = uniqueName('e2e-door-a');
  const other = uniqueName('e2e-door-b');
  let git: GitTestServer | undefined;
  let controller: LockedDownController | undefined;
  const adminRequests: string[] = [];
  let versionBytesSent = 0;
  // Answers every request with a 600 MiB body, streamed; records what reaches the "admin" path.
  const hostile = http.createServer((req, res) => {
    if ((req.url ?? '').startsWith('/internal/')) adminRequests.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(MiB, 0x20);
    let left = 600;
    const pump = (): void => {
      while (left > 0) {
        left -= 1;
        versionBytesSent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('close', () => (left = 0));
    pump();
  });
  let port = 0;

  beforeAll(async () => {
    await installCrd();
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    port = (hostile.address() as AddressInfo).port;
    git = await startGitServer({ files: { 'app/app.yaml': configMapYaml('app-config', { k: 'v1' }) } });
    for (const namespace of [attacker, other]) {
      await createNamespace(c.kc, namespace);
      // The chart's default account, which reads the Secrets its ApplySets and Notifications name.
      await createTenantAccount(c, namespace, ACCOUNT, [
        coreRule('configmaps'),
        {
          apiGroups: [''],
          resources: ['secrets'],
          resourceNames: ['my-cluster', 'purge-hook'],
          verbs: ['get'],
        },
      ]);
    }
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: mine, cluster: { server: "http://127.0.0.1:' + port + '" } }]',
      'users: [{ name: me, user: { token: tenant-token } }]',
      'contexts: [{ name: mine, context: { cluster: mine, user: me } }]',
      'current-context: mine',
    ].join('\n');
    await c.core.createNamespacedSecret({
      namespace: attacker,
      body: { metadata: { name: 'my-cluster' }, stringData: { value: kubeconfig } },
    });
    await c.core.createNamespacedSecret({
      namespace: attacker,
      body: {
        metadata: { name: 'purge-hook', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: {
          address: `http://127.0.0.1:${port}${ADMIN_PATH}`,
          token: 'tenant-chosen-token',
          hmacKey: 'k3y',
        },
      },
    });
    // The operator lets the test's loopback server be a remote cluster (as they would a real one); the
    // chart's notification defaults are left as they are.
    controller = await startLockedDownController({
      namespace: undefined,
      values: { 'remoteClusters.allowedHosts[0]': '127.0.0.1' },
      chartDefaults: true,
      allowLoopbackNotifications: false,
    });
  }, 180_000);

  afterAll(async () => {
    await stopControllersAndGit(git);
    await controller?.cleanup();
    hostile.closeAllConnections();
    await new Promise<void>((resolve) => hostile.close(() => resolve()));
  });

  it("stalls an ApplySet whose remote cluster answers /version with 600 MiB, within bounded memory, while another tenant's ApplySet becomes Ready", async () => {
    const server = git as GitTestServer;
    const source = { url: server.url, path: 'app', serviceAccountName: ACCOUNT };
    await createApplySetWithSpec(c, attacker, 'remote', source, {
      kubeConfig: { secretRef: { name: 'my-cluster' } },
    });
    await createApplySet(c, other, 'neighbour', source);
    const stalled = await waitForReady(
      c,
      attacker,
      'remote',
      'False',
      (view) => (condition(view, 'Ready')?.reason === 'ResponseTooLarge' ? true : false),
      120_000,
    );
    const ready = await waitForReady(c, other, 'neighbour', 'True', undefined, 120_000);
    const peak = await peakRssOf((controller as LockedDownController).process);
    console.log(
      `peak RSS of the controller: ${(peak / MiB).toFixed(0)} MiB; the hostile server wrote ${(versionBytesSent / MiB).toFixed(0)} MiB before the controller closed the connection`,
    );
    expect(condition(stalled, 'Ready')?.message).toContain(
      `the answer of 127.0.0.1:${port}/version is larger than 65536 bytes, the limit for one remote-cluster answer`,
    );
    expect(condition(ready, 'Ready')?.status).toBe('True');
    expect(peak).toBeLessThan(400 * MiB);
    expect(versionBytesSent).toBeLessThan(600 * MiB);
  }, 300_000);

  it('sends nothing to an internal address named by a Notification, and says refused in its status', async () => {
    const server = git as GitTestServer;
    await createApplySet(c, attacker, 'local', {
      url: server.url,
      path: 'app',
      serviceAccountName: ACCOUNT,
    });
    await createNotification(c, attacker, 'purge', { type: 'webhook', secret: 'purge-hook' }, ['local']);
    await waitForReady(c, attacker, 'local', 'True', undefined, 120_000);
    const refused = await waitFor(
      'the Notification to say it was refused',
      async () => {
        const notification = (await c.custom.getNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: attacker,
          plural: 'notifications',
          name: 'purge',
        })) as { status?: { refused?: { message?: string }; lastSent?: object } };
        return notification.status?.refused;
      },
      120_000,
    );
    expect(refused.message).toBe(
      `127.0.0.1:${port} is refused as a notification destination: 127.0.0.1 is a loopback address (--internal-notification-hosts may name it)`,
    );
    expect(adminRequests).toEqual([]);
  }, 300_000);
});
