import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createNotificationDispatcher,
  type NotificationReceiver,
  type NotificationResult,
} from '../../src/notify/notification-dispatcher.js';
import type { NotificationEvent } from '../../src/notify/notification-event.js';

const event = (state: NotificationEvent['state'], revision: string): NotificationEvent => ({
  namespace: 'team-a',
  name: 'web',
  topic: 'sync',
  state,
  severity: state === 'failed' ? 'error' : 'info',
  reason: 'R',
  revision,
  summary: `${state} ${revision}`,
  details: [],
});

/** A local receiver that answers each request with `answer` and records the bodies. */
async function receiver(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      bodies.push(body);
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

function counter(): { counts: Record<NotificationResult, number>; count: (r: NotificationResult) => void } {
  const counts = { sent: 0, retried: 0, dropped: 0, filtered: 0 };
  return { counts, count: (result) => (counts[result] += 1) };
}

const to = (url: string): NotificationReceiver => ({
  id: 'team-a/chat',
  delivery: (e) => ({ url, headers: {}, body: JSON.stringify({ text: e.summary }) }),
});

/** The receivers of these tests listen on loopback, which the operator must name to allow. */
const LOOPBACK = ['127.0.0.1'];

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('createNotificationDispatcher', () => {
  test('one message per change of state: the same state and revision again is filtered', async () => {
    const hook = await receiver((_req, res) => res.end('ok'));
    servers.push(hook.server);
    const { counts, count } = counter();
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: () => {},
      perSecond: 100,
    });
    for (const e of [
      event('applied', 'r1'),
      event('applied', 'r1'),
      event('failed', 'r2'),
      event('failed', 'r2'),
      event('failed', 'r2'),
      event('recovered', 'r3'),
    ]) {
      dispatcher.notify(to(hook.url), e);
    }
    await dispatcher.idle();
    expect(hook.bodies.map((b) => (JSON.parse(b) as { text: string }).text)).toEqual([
      'applied r1',
      'failed r2',
      'recovered r3',
    ]);
    expect(counts).toEqual({ sent: 3, retried: 0, dropped: 0, filtered: 3 });
  });

  test('a deleted ApplySet or Notification is forgotten: the same state is news again', async () => {
    const hook = await receiver((_req, res) => res.end('ok'));
    servers.push(hook.server);
    const { counts, count } = counter();
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: () => {},
      perSecond: 100,
    });
    const again = async () => {
      dispatcher.notify(to(hook.url), event('applied', 'r1'));
      await dispatcher.idle();
    };
    await again();
    await again();
    dispatcher.forget('team-a/other');
    await again();
    dispatcher.retain('team-a/', new Set(['team-a/chat']));
    await again();
    expect(counts).toEqual({ sent: 1, retried: 0, dropped: 0, filtered: 3 });
    dispatcher.forget('team-a/web');
    await again();
    dispatcher.retain('team-a/', new Set());
    await again();
    expect(counts).toEqual({ sent: 3, retried: 0, dropped: 0, filtered: 3 });
  });

  test('a receiver that answers 500 is retried with backoff, then the message is dropped and counted', async () => {
    const hook = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    servers.push(hook.server);
    const { counts, count } = counter();
    const warnings: string[] = [];
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: (id, message) => warnings.push(`${id}: ${message}`),
      attempts: 3,
      backoffMs: 10,
    });
    dispatcher.notify(to(`${hook.url}?token=s3cret`), event('failed', 'r2'));
    await dispatcher.idle();
    expect(hook.bodies).toHaveLength(3);
    expect(counts).toEqual({ sent: 0, retried: 2, dropped: 1, filtered: 0 });
    expect(warnings).toEqual([
      'team-a/chat: dropped after 3 attempt(s): notification to team-a/chat failed: answered HTTP 500',
    ]);
    expect(warnings.join()).not.toContain('s3cret');
  });

  test('a receiver that is down or does not answer never holds the caller', async () => {
    const silent = await receiver(() => {
      // Never answers: the request times out.
    });
    servers.push(silent.server);
    const { counts, count } = counter();
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: () => {},
      attempts: 2,
      backoffMs: 5,
      timeoutMs: 200,
    });
    const started = performance.now();
    dispatcher.notify(to(silent.url), event('failed', 'r2'));
    dispatcher.notify({ ...to('http://127.0.0.1:1/hook'), id: 'team-a/down' }, event('failed', 'r2'));
    expect(performance.now() - started).toBeLessThan(50);
    await dispatcher.idle();
    expect(counts).toEqual({ sent: 0, retried: 2, dropped: 2, filtered: 0 });
    silent.server.closeAllConnections();
  });

  test('a full queue drops what does not fit, and counts it', async () => {
    const hook = await receiver((_req, res) => res.end('ok'));
    servers.push(hook.server);
    const { counts, count } = counter();
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: () => {},
      queueLimit: 2,
      perSecond: 100,
    });
    for (let i = 0; i < 5; i += 1) dispatcher.notify(to(hook.url), event('applied', `r${i}`));
    await dispatcher.idle();
    expect(counts).toMatchObject({ sent: 2, dropped: 3 });
  });

  test('a message dropped for want of room is not taken as told: the same state later is sent', async () => {
    const hook = await receiver((_req, res) => res.end('ok'));
    servers.push(hook.server);
    const { counts, count } = counter();
    const warnings: string[] = [];
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: (_receiver, message) => warnings.push(message),
      queueLimit: 1,
      perSecond: 100,
    });
    dispatcher.notify(to(hook.url), event('applied', 'r1'));
    dispatcher.notify(to(hook.url), event('failed', 'r2'));
    await dispatcher.idle();
    expect(counts).toEqual({ sent: 1, retried: 0, dropped: 1, filtered: 0 });
    expect(warnings).toEqual(['queue full: message dropped']);
    dispatcher.notify(to(hook.url), event('failed', 'r2'));
    await dispatcher.idle();
    expect(counts).toEqual({ sent: 2, retried: 0, dropped: 1, filtered: 0 });
    expect(hook.bodies.map((body) => (JSON.parse(body) as { text: string }).text)).toEqual([
      'applied r1',
      'failed r2',
    ]);
  });

  test('a deleted receiver loses its queue: what waited is dropped and counted, not sent', async () => {
    const hook = await receiver((_req, res) => res.end('ok'));
    servers.push(hook.server);
    const { counts, count } = counter();
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: () => {},
      perSecond: 1,
    });
    const other = { ...to(hook.url), id: 'team-b/chat' };
    for (let i = 0; i < 3; i += 1) dispatcher.notify(to(hook.url), event('applied', `r${i}`));
    dispatcher.notify(other, event('applied', 'b1'));
    // team-a/chat is gone from team-a; team-b is another scope and keeps its queue.
    dispatcher.retain('team-a/', new Set());
    await dispatcher.idle();
    const texts = hook.bodies.map((body) => (JSON.parse(body) as { text: string }).text);
    expect(texts).not.toContain('applied r1');
    expect(texts).not.toContain('applied r2');
    expect(texts).toContain('applied b1');
    expect(counts.dropped).toBeGreaterThanOrEqual(2);
    expect(counts.sent + counts.dropped).toBe(4);
    // Recreated, it starts afresh: the state it was told before is told again.
    dispatcher.notify(to(hook.url), event('applied', 'r0'));
    await dispatcher.idle();
    expect(counts.filtered).toBe(0);
  });

  test('a redirect is not followed: the message does not go to a host the Secret does not name', async () => {
    const elsewhere = await receiver((_req, res) => res.end('ok'));
    const hook = await receiver((_req, res) => {
      res.statusCode = 307;
      res.setHeader('location', elsewhere.url);
      res.end();
    });
    servers.push(elsewhere.server, hook.server);
    const { counts, count } = counter();
    const dispatcher = createNotificationDispatcher({
      internalHosts: LOOPBACK,
      count,
      warn: () => {},
      attempts: 1,
    });
    dispatcher.notify(to(hook.url), event('applied', 'r1'));
    await dispatcher.idle();
    expect(elsewhere.bodies).toEqual([]);
    expect(counts).toMatchObject({ sent: 0, dropped: 1 });
  });

  test('a receiver on loopback gets nothing unless the operator names its host, and is told refused once', async () => {
    const internal = await receiver((_req, res) => res.end('ok'));
    servers.push(internal.server);
    const { counts, count } = counter();
    const warnings: string[] = [];
    const refusals: string[] = [];
    const dispatcher = createNotificationDispatcher({
      count,
      warn: (id, message) => warnings.push(`${id}: ${message}`),
      attempts: 4,
      backoffMs: 10,
    });
    const port = new URL(internal.url).port;
    dispatcher.notify(
      {
        ...to(`http://127.0.0.1:${port}/internal/admin/purge?confirm=yes`),
        refused: (message) => refusals.push(message),
      },
      event('failed', 'r2'),
    );
    await dispatcher.idle();
    expect(internal.bodies).toEqual([]);
    expect(counts).toMatchObject({ sent: 0, retried: 0, dropped: 1 });
    expect(refusals).toEqual([
      `127.0.0.1:${port} is refused as a notification destination: 127.0.0.1 is a loopback address (--internal-notification-hosts may name it)`,
    ]);
    expect(warnings.join('\n')).not.toContain('purge');
  });
});
