import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  createApplySet,
  installCrd,
  startController,
  stopAllControllers,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';

// Issue #23, "a source URL may name loopback": a tenant's source URL made the controller send a GET with
// the tenant's path and query to an internal HTTP server, and the status told an open port from a closed
// one. Through the controller: without --allowed-source-hosts the internal server receives nothing; with
// it, a closed port and a web server that is not Git read the same in the status.

const ADMIN_PATH = '/admin/do-something?confirm=yes';

describe('the controller and sources on its own side of the network', () => {
  const c = cluster();
  const guarded = uniqueName('e2e-internal');
  const allowed = uniqueName('e2e-internal-allowed');
  const adminRequests: string[] = [];
  const admin = http.createServer((req, res) => {
    adminRequests.push(req.url ?? '/');
    req.resume();
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>done</html>');
  });
  let adminPort = 0;

  const stalledOrFailing = (namespace: string, name: string, reason: string): Promise<ApplySetView> =>
    waitForReady(c, namespace, name, 'False', (view) => condition(view, 'Ready')?.reason === reason);

  beforeAll(async () => {
    await installCrd();
    await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
    adminPort = (admin.address() as AddressInfo).port;
    for (const namespace of [guarded, allowed]) {
      await createNamespace(c.kc, namespace);
      await createTenantAccount(c, namespace, 'deployer', [coreRule('configmaps')]);
    }
    // The defaults, with nothing allowed; and the same controller told that 127.0.0.1 is a Git host.
    await startController({ namespace: guarded, args: [], allowLoopbackGit: false });
    await startController({ namespace: allowed, args: ['--allowed-source-hosts', '127.0.0.1'] });
  });

  afterAll(async () => {
    await stopAllControllers();
    await new Promise<void>((resolve) => {
      admin.close(() => resolve());
      admin.closeAllConnections();
    });
  });

  it('sends nothing to an internal server on loopback unless the host is allowed', async () => {
    const url = `http://127.0.0.1:${adminPort}${ADMIN_PATH}`;
    await createApplySet(c, guarded, 'admin', { url, serviceAccountName: 'deployer' });
    const view = await stalledOrFailing(guarded, 'admin', 'SourceNotAllowed');
    expect(condition(view, 'Ready')?.message).toBe(
      `source ${url} is not allowed: 127.0.0.1 is a loopback address (--allowed-source-hosts may name it)`,
    );
    expect(adminRequests).toEqual([]);
  });

  it('says the same of a closed port and of a web server that is not Git', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    await createApplySet(c, allowed, 'closed', {
      url: `http://127.0.0.1:${closedPort}/repo.git`,
      serviceAccountName: 'deployer',
    });
    await createApplySet(c, allowed, 'open', {
      url: `http://127.0.0.1:${adminPort}/repo.git`,
      serviceAccountName: 'deployer',
    });
    const said = await Promise.all(
      [
        ['closed', closedPort],
        ['open', adminPort],
      ].map(async ([name, port]) => {
        const ready = condition(await stalledOrFailing(allowed, String(name), 'GitUnreachable'), 'Ready');
        return { reason: ready?.reason, message: ready?.message?.replace(`:${port}/`, ':PORT/') };
      }),
    );
    expect(said[0]).toEqual({
      reason: 'GitUnreachable',
      message: 'Git source http://127.0.0.1:PORT/repo.git unreachable or not a Git repository',
    });
    expect(said[1]).toEqual(said[0]);
    // The web server was asked (the host is allowed): it is the status that does not tell.
    expect(adminRequests.length).toBeGreaterThan(0);
  });
});
