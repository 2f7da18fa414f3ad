import { createHmac } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGiteaServer, type GiteaServer } from '../harness/gitea-server.js';
import { waitFor } from '../e2e/wait-for.js';

// The harness's Gitea is a real forge: what the tests rely on (private repositories behind real
// authentication, pushes over HTTP, Gitea's own signed webhooks, commit statuses through its API)
// is checked here against the forge itself, with nothing of the controller involved.

interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function startReceiver(): Promise<{ server: Server; port: number; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as AddressInfo).port, deliveries }),
    ),
  );
}

describe('the harness Gitea', () => {
  let forge: GiteaServer;

  beforeAll(async () => {
    forge = await startGiteaServer();
  });

  afterAll(() => forge?.close());

  it('makes its admin with the gitea command and serves the API without the web assets', async () => {
    const me = await forge.api<{ login: string; is_admin: boolean }>('GET', '/user');
    expect(me).toMatchObject({ login: forge.admin.username, is_admin: true });
    const version = await forge.api<{ version: string }>('GET', '/version');
    expect(version.version).toBe('1.26.0');
  });

  it('keeps a private repository from anyone without credentials, for the API and for git', async () => {
    const owner = await forge.createUser('alice');
    await forge.createOrganization('team', owner);
    const repository = await forge.createRepository('team', 'app', owner);
    expect(repository.cloneUrl).toBe(`${forge.url}/team/app.git`);
    const sha = await forge.push(repository, owner, { 'a.yaml': 'a: 1\n', 'dir/b.yaml': 'b: 2\n' });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);

    const anonymous = await fetch(`${forge.url}/api/v1/repos/team/app`);
    expect([401, 403, 404]).toContain(anonymous.status);
    const refs = await fetch(`${forge.url}/team/app.git/info/refs?service=git-upload-pack`);
    expect(refs.status).toBe(401);
    const wrong = `Basic ${Buffer.from(`${owner.username}:not-the-token`).toString('base64')}`;
    const refused = await fetch(`${forge.url}/team/app.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: wrong },
    });
    expect(refused.status).toBe(401);
    const right = `Basic ${Buffer.from(`${owner.username}:${owner.token}`).toString('base64')}`;
    const served = await fetch(`${forge.url}/team/app.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: right },
    });
    expect(served.status).toBe(200);
    expect(await served.text()).toContain(`${sha} refs/heads/main`);
  });

  it("sends its own push webhook, signed with the hook's secret, to a receiver on loopback", async () => {
    const owner = await forge.createUser('bob');
    const repository = await forge.createRepository('bob', 'hooked', owner);
    await forge.push(repository, owner, { 'a.yaml': 'a: 1\n' });
    const receiver = await startReceiver();
    try {
      await forge.addWebhook(repository, `http://127.0.0.1:${receiver.port}/hook/x`, 'hook-s3cret', owner);
      const sha = await forge.push(repository, owner, { 'a.yaml': 'a: 2\n' });
      // Gitea finds a push's hooks when its queue handles the push, so the push before the hook may be
      // delivered too: the one of this commit is looked for.
      const delivery = await waitFor('the push delivery of the new commit', async () =>
        receiver.deliveries.find(
          (d) =>
            d.headers['x-gitea-event'] === 'push' && (JSON.parse(d.body) as { after?: string }).after === sha,
        ),
      );
      const expected = createHmac('sha256', 'hook-s3cret').update(delivery.body).digest('hex');
      expect(delivery.headers['x-gitea-signature']).toBe(expected);
      expect(JSON.parse(delivery.body)).toMatchObject({
        ref: 'refs/heads/main',
        after: sha,
        repository: { clone_url: repository.cloneUrl },
      });
    } finally {
      await new Promise((resolve) => receiver.server.close(resolve));
    }
  });

  it('reads back the commit statuses posted through its API', async () => {
    const owner = await forge.createUser('carol');
    const repository = await forge.createRepository('carol', 'statuses', owner);
    const sha = await forge.push(repository, owner, { 'a.yaml': 'a: 1\n' });
    expect(await forge.commitStatuses(repository, sha, owner)).toEqual([]);
    for (const state of ['pending', 'success'] as const) {
      await forge.api(
        'POST',
        `/repos/carol/statuses/statuses/${sha}`,
        { state, context: 'applyset/test', description: `it is ${state}`, target_url: '' },
        owner,
      );
    }
    const statuses = await forge.commitStatuses(repository, sha, owner);
    expect(statuses.map((s) => [s.status, s.context, s.description]).sort()).toEqual([
      ['pending', 'applyset/test', 'it is pending'],
      ['success', 'applyset/test', 'it is success'],
    ]);
  });

  it('stops: the port is closed and its directory is gone', async () => {
    const other = await startGiteaServer();
    await other.close();
    await expect(fetch(`${other.url}/api/v1/version`)).rejects.toThrow();
    await expect(stat(other.workDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
