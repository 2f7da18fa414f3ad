import { connect, type Socket } from 'node:net';
import type { RegistryPush } from '../../src/http/registry-event.js';
import { startWebhookServer, type WebhookServer } from '../../src/http/start-webhook-server.js';

// The registry route of the push receiver over real HTTP on loopback: `POST /hook/registry/<receiver>`
// with distribution's envelope and its static `Authorization: Bearer` header. A wrong or missing token
// is refused before the body is read; what is not a manifest push is acknowledged (distribution
// would send it again otherwise) and never charged to the rate.

const TOKEN = 'registry-t0ken';
const ENVELOPE_TYPE = 'application/vnd.docker.distribution.events.v2+json';
const target = {
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  digest: `sha256:${'d'.repeat(64)}`,
  repository: 'team/app',
  url: `http://127.0.0.1:5000/v2/team/app/manifests/sha256:${'d'.repeat(64)}`,
  tag: 'stable',
};
const manifestEnvelope = JSON.stringify({
  events: [{ action: 'push', target, request: { host: '127.0.0.1:5000', method: 'PUT' } }],
});
const blobEnvelope = JSON.stringify({
  events: [
    {
      action: 'push',
      target: {
        mediaType: 'application/octet-stream',
        digest: 'sha256:0',
        repository: 'team/app',
        url: '/v2/x',
      },
      request: { host: '127.0.0.1:5000', method: 'PUT' },
    },
  ],
});

describe('the registry receiver', () => {
  let server: WebhookServer;
  const calls: { pushes: readonly RegistryPush[]; receiver: string }[] = [];
  const forgeCalls: unknown[] = [];
  const warnings: string[] = [];
  let clock = 0;

  beforeAll(async () => {
    server = await startWebhookServer({
      address: '127.0.0.1:0',
      secretFor: async (receiver) => (receiver === 'registry' ? TOKEN : undefined),
      onPush: (push) => {
        forgeCalls.push(push);
        return 0;
      },
      onRegistryPush: (pushes, receiver) => {
        calls.push({ pushes, receiver });
        return 2;
      },
      ratePerSecond: 1,
      burst: 3,
      now: () => clock,
      logger: { info: () => undefined, warn: (_object, message) => warnings.push(message) },
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    calls.length = 0;
    forgeCalls.length = 0;
    clock += 60_000;
  });

  const post = (body: string, headers: Record<string, string> = {}, path = '/hook/registry/registry') =>
    fetch(`http://127.0.0.1:${server.port}${path}`, {
      method: 'POST',
      headers: { 'content-type': ENVELOPE_TYPE, authorization: `Bearer ${TOKEN}`, ...headers },
      body,
    });

  it('asks for the reconciles of a tagged manifest push sent with the token', async () => {
    const response = await post(manifestEnvelope);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ matched: 2 });
    expect(calls).toEqual([
      {
        receiver: 'registry',
        pushes: [{ hosts: ['127.0.0.1:5000'], repository: 'team/app', tag: 'stable', digest: target.digest }],
      },
    ]);
    expect(forgeCalls).toEqual([]);
  });

  it("takes distribution v2's media type too", async () => {
    const v1 = 'application/vnd.docker.distribution.events.v1+json';
    expect((await post(manifestEnvelope, { 'content-type': v1 })).status).toBe(202);
  });

  it.each([
    ['no token', { authorization: '' }],
    ['another token', { authorization: 'Bearer guess' }],
    ['the token as Basic credentials', { authorization: `Basic ${TOKEN}` }],
    ['the token without its scheme', { authorization: TOKEN }],
  ])('answers 401 to %s and changes nothing', async (_what, headers) => {
    const response = await post(manifestEnvelope, headers);
    expect(response.status).toBe(401);
    expect(calls).toEqual([]);
  });

  it('refuses a wrong token before the body is sent, and logs it once per 10 s', async () => {
    warnings.length = 0;
    const socket = await openSocket(server.port);
    // Headers only, announcing 100 MiB that never come: the answer cannot wait for them.
    socket.write(
      'POST /hook/registry/registry HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer guess\r\n' +
        `content-type: ${ENVELOPE_TYPE}\r\ncontent-length: ${100 * 1024 * 1024}\r\n\r\n`,
    );
    expect(await responseOf(socket)).toMatch(/^HTTP\/1\.1 401 /);
    expect((await post(manifestEnvelope, { authorization: 'Bearer guess' })).status).toBe(401);
    expect(warnings).toEqual([expect.stringMatching(/^webhook: bad token, ignored/)]);
    expect(calls).toEqual([]);
  });

  it('answers 404 to an unknown receiver, 405 to a GET, 415 to another media type, 400 to a non-envelope', async () => {
    expect((await post(manifestEnvelope, {}, '/hook/registry/other')).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/hook/registry/registry`)).status).toBe(405);
    expect((await post(manifestEnvelope, { 'content-type': 'application/json' })).status).toBe(415);
    const notEnvelope = await post('{"ref":"refs/heads/main"}');
    expect(notEnvelope.status).toBe(400);
    expect(await notEnvelope.json()).toEqual({
      error: 'the body is not an envelope of events ({"events": [...]})',
    });
    expect(calls).toEqual([]);
  });

  it('acknowledges blob pushes and pulls without charging them to the rate', async () => {
    for (let i = 0; i < 10; i += 1) {
      const response = await post(blobEnvelope);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ignored: 'no manifest push' });
    }
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await post(manifestEnvelope)).status);
    // A burst of 3: the fourth manifest push waits (distribution sends it again after its backoff).
    expect(statuses).toEqual([202, 202, 202, 429]);
    expect(calls).toHaveLength(3);
  });

  it('leaves a forge receiver of the same name to the forge route', async () => {
    const response = await fetch(`http://127.0.0.1:${server.port}/hook/registry`, {
      method: 'POST',
      headers: { 'x-github-event': 'push', 'content-type': ENVELOPE_TYPE, authorization: `Bearer ${TOKEN}` },
      body: manifestEnvelope,
    });
    // `registry` is also a receiver name on /hook/<receiver>, where a bearer token is no signature.
    expect(response.status).toBe(401);
    expect(calls).toEqual([]);
  });
});

describe('a webhook server without a registry handler', () => {
  it('has no registry route', async () => {
    const server = await startWebhookServer({
      address: '127.0.0.1:0',
      secretFor: async () => TOKEN,
      onPush: () => 0,
    });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/hook/registry/registry`, {
        method: 'POST',
        headers: { 'content-type': ENVELOPE_TYPE, authorization: `Bearer ${TOKEN}` },
        body: manifestEnvelope,
      });
      expect(response.status).toBe(404);
    } finally {
      await server.close();
    }
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
