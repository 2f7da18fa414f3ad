import { createHmac } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { repositoryIdentity, parsePushPayload, type PushEvent } from '../../src/http/push-event.js';
import {
  startWebhookServer,
  WEBHOOK_LIMITS,
  type WebhookServer,
} from '../../src/http/start-webhook-server.js';
import { waitFor } from '../e2e/wait-for.js';

// The push receiver over real HTTP on loopback: signatures of the three forges, a bad signature
// changing nothing, the rate limit, the bounds on what any caller can hold (body, time, connections),
// and the payload fields that name the repository and the ref.

const SECRET = 'webhook-s3cret';
const githubPush = {
  ref: 'refs/heads/main',
  repository: {
    clone_url: 'https://git.example.com/team/app.git',
    html_url: 'https://git.example.com/team/app',
  },
};
const gitlabPush = {
  object_kind: 'push',
  ref: 'refs/heads/release',
  project: {
    git_http_url: 'https://gitlab.example.com/group/app.git',
    web_url: 'https://gitlab.example.com/group/app',
  },
};

describe('the push webhook receiver', () => {
  let server: WebhookServer;
  const pushes: { push: PushEvent; receiver: string }[] = [];
  let clock = 0;
  const warnings: string[] = [];

  beforeAll(async () => {
    server = await startWebhookServer({
      address: '127.0.0.1:0',
      secretFor: async (receiver) => (receiver === 'main-repo' ? SECRET : undefined),
      onPush: (push, receiver) => {
        pushes.push({ push, receiver });
        return 3;
      },
      ratePerSecond: 1,
      burst: 20,
      now: () => clock,
      logger: { info: () => undefined, warn: (_object, message) => warnings.push(message) },
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    pushes.length = 0;
    clock += 60_000; // every test starts with a full bucket
  });

  const post = (path: string, headers: Record<string, string>, body: string) =>
    fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers, body });
  const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

  it('accepts a GitHub push signed with the secret and asks for the matching reconciles', async () => {
    const body = JSON.stringify(githubPush);
    const response = await post(
      '/hook/main-repo',
      { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${sign(body)}` },
      body,
    );
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ matched: 3 });
    expect(pushes).toEqual([
      {
        receiver: 'main-repo',
        push: {
          provider: 'github',
          repositoryUrls: ['https://git.example.com/team/app.git', 'https://git.example.com/team/app'],
          branch: 'main',
        },
      },
    ]);
  });

  it('accepts Gitea/Forgejo signatures and GitLab tokens', async () => {
    const body = JSON.stringify(githubPush);
    const gitea = await post(
      '/hook/main-repo',
      { 'x-gitea-event': 'push', 'x-gitea-signature': sign(body) },
      body,
    );
    expect(gitea.status).toBe(202);
    const gitlabBody = JSON.stringify(gitlabPush);
    const gitlab = await post(
      '/hook/main-repo',
      { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': SECRET },
      gitlabBody,
    );
    expect(gitlab.status).toBe(202);
    expect(pushes.map((p) => [p.push.provider, p.push.branch])).toEqual([
      ['gitea', 'main'],
      ['gitlab', 'release'],
    ]);
  });

  it.each([
    ['no signature', {}],
    ['a signature made with another secret', { 'x-hub-signature-256': `sha256=${sign('x', 'other')}` }],
    ['a signature of another body', { 'x-hub-signature-256': `sha256=${sign('{}')}` }],
  ])('answers 401 to %s and changes nothing', async (_what, headers) => {
    const body = JSON.stringify(githubPush);
    const response = await post('/hook/main-repo', { 'x-github-event': 'push', ...headers }, body);
    expect(response.status).toBe(401);
    expect(pushes).toEqual([]);
  });

  it('answers 401 to a wrong GitLab token, 404 to an unknown receiver, 405 to a GET', async () => {
    const wrong = await post(
      '/hook/main-repo',
      { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'nope' },
      '{}',
    );
    expect(wrong.status).toBe(401);
    const body = JSON.stringify(githubPush);
    const unknown = await post(
      '/hook/other',
      { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${sign(body)}` },
      body,
    );
    expect(unknown.status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/hook/main-repo`)).status).toBe(405);
    expect(pushes).toEqual([]);
  });

  it('acknowledges a signed ping without reconciling anything', async () => {
    const body = JSON.stringify({ zen: 'hi' });
    const response = await post(
      '/hook/main-repo',
      { 'x-github-event': 'ping', 'x-hub-signature-256': `sha256=${sign(body)}` },
      body,
    );
    expect(response.status).toBe(200);
    expect(pushes).toEqual([]);
  });

  it('limits each receiver to its rate: past the burst, 429 until tokens come back', async () => {
    const body = JSON.stringify(githubPush);
    const headers = { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${sign(body)}` };
    const statuses: number[] = [];
    for (let i = 0; i < 22; i += 1) statuses.push((await post('/hook/main-repo', headers, body)).status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual([429, 429]);
    clock += 1_000; // one token per second
    expect((await post('/hook/main-repo', headers, body)).status).toBe(202);
  });

  it('charges only signed requests to the rate: 30 unsigned POSTs leave a signed push accepted', async () => {
    const body = JSON.stringify(githubPush);
    for (let i = 0; i < 30; i += 1) {
      const unsigned = await post('/hook/main-repo', { 'x-github-event': 'push' }, body);
      expect(unsigned.status).toBe(401);
    }
    const signed = await post(
      '/hook/main-repo',
      { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${sign(body)}` },
      body,
    );
    expect(signed.status).toBe(202);
    expect(pushes).toHaveLength(1);
  });

  it('logs one bad signature per receiver per 10 s, however many arrive', async () => {
    warnings.length = 0;
    const body = JSON.stringify(githubPush);
    const unsigned = () => post('/hook/main-repo', { 'x-github-event': 'push' }, body);
    for (let i = 0; i < 5; i += 1) expect((await unsigned()).status).toBe(401);
    expect(warnings).toEqual([expect.stringMatching(/^webhook: bad signature, ignored/)]);
    clock += 10_000;
    expect((await unsigned()).status).toBe(401);
    expect(warnings).toHaveLength(2);
  });

  it.each([
    ['a Content-Length over the limit', { 'content-length': String(100 * 1024 * 1024) }],
    ['a chunked body that grows past the limit', { 'transfer-encoding': 'chunked' }],
  ] as [string, Record<string, string>][])(
    'refuses %s with 413 before the client has sent it all',
    async (_what, headers) => {
      const socket = await openSocket(server.port);
      const head = Object.entries({ host: 'localhost', 'x-github-event': 'push', ...headers })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`POST /hook/main-repo HTTP/1.1\r\n${head}\r\n`);
      // A little over the limit of 1 MiB, then nothing more: the rest of the 100 MiB is never sent.
      const part = Buffer.alloc(WEBHOOK_LIMITS.maxBodyBytes + 64 * 1024, 'x');
      socket.write(
        headers['transfer-encoding'] === undefined
          ? part
          : Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]),
      );
      const answer = await responseOf(socket);
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain(`the body is over ${WEBHOOK_LIMITS.maxBodyBytes} bytes`);
      expect(pushes).toEqual([]);
    },
  );
});

describe('the push webhook receiver under a slow or crowding client', () => {
  let server: WebhookServer;
  beforeAll(async () => {
    server = await startWebhookServer({
      address: '127.0.0.1:0',
      secretFor: async () => SECRET,
      onPush: () => 0,
      limits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000, checkIntervalMs: 100, maxConnections: 3 },
    });
  });
  afterAll(() => server.close());

  it('cuts a connection that trickles its headers within the header timeout', async () => {
    const socket = await openSocket(server.port);
    const started = Date.now();
    socket.write('POST /hook/main-repo HTTP/1.1\r\nhost: localhost\r\n');
    // One header byte every 50 ms: each keeps the socket busy, none ends the headers.
    const trickle = setInterval(() => socket.write('x'), 50);
    try {
      const answer = await responseOf(socket);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
    // The bound is 500 ms, checked every 100 ms; the margin is for a loaded machine.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('cuts a connection that trickles its body within the request timeout', async () => {
    const socket = await openSocket(server.port);
    const started = Date.now();
    socket.write('POST /hook/main-repo HTTP/1.1\r\nhost: localhost\r\ncontent-length: 100000\r\n\r\n');
    const trickle = setInterval(() => socket.write('x'), 50);
    try {
      expect(await responseOf(socket)).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('refuses connections past its maximum', async () => {
    const held = await Promise.all([1, 2, 3].map(() => openSocket(server.port)));
    const extra = await openSocket(server.port);
    await waitFor('the extra connection to be closed', async () => (extra.closed ? true : undefined), 5_000);
    for (const socket of held) socket.destroy();
  });
});

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection. */
function responseOf(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(text));
  });
}

describe('push payloads and repository identity', () => {
  it('reads tags, and refuses payloads without a ref or a URL', () => {
    expect(
      parsePushPayload('github', Buffer.from(JSON.stringify({ ...githubPush, ref: 'refs/tags/v1.2.0' }))),
    ).toMatchObject({
      tag: 'v1.2.0',
    });
    expect(parsePushPayload('github', Buffer.from('{"repository":{}}'))).toEqual({
      error: 'the payload has no ref',
    });
    expect(parsePushPayload('github', Buffer.from('{"ref":"refs/heads/x","repository":{}}'))).toEqual({
      error: 'the payload names no http(s) repository URL',
    });
    expect(parsePushPayload('github', Buffer.from('not json'))).toEqual({ error: 'the body is not JSON' });
  });

  it.each([
    ['https://git.example.com/team/app.git', 'https://git.example.com/team/app'],
    ['https://Git.Example.com/team/app/', 'http://git.example.com/team/app.git'],
    ['https://user:pw@git.example.com:443/team/app', 'https://git.example.com/team/app'],
    ['ssh://git@git.example.com/team/app.git', 'https://git.example.com/team/app'],
    ['git@git.example.com:team/app.git', 'https://git.example.com/team/app'],
  ])('%s and %s name one repository', (a, b) => {
    expect(repositoryIdentity(a)).toBe(repositoryIdentity(b));
  });

  it('tells different repositories and ports apart', () => {
    expect(repositoryIdentity('https://git.example.com/team/app')).not.toBe(
      repositoryIdentity('https://git.example.com/team/app2'),
    );
    expect(repositoryIdentity('https://git.example.com:8443/team/app')).not.toBe(
      repositoryIdentity('https://git.example.com/team/app'),
    );
  });
});
