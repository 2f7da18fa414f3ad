import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  createNotificationDispatcher,
  type NotificationReceiver,
} from '../../src/notify/notification-dispatcher.js';
import type { NotificationEvent } from '../../src/notify/notification-event.js';
import { privateCertificateAuthority } from '../harness/private-certificate-authority.js';

// A receiver over HTTPS whose certificate a private CA signed: the message reaches it with the CA of its
// Secret's ca.crt, and without it nothing is sent and the warning says which certificate failed.

const event: NotificationEvent = {
  namespace: 'team-a',
  name: 'web',
  topic: 'sync',
  state: 'applied',
  severity: 'info',
  reason: 'R',
  revision: 'r1',
  summary: 'applied r1',
  details: [],
};

describe('a notification receiver of a private CA', () => {
  let server: Server;
  let url: string;
  let ca: string;
  const bodies: string[] = [];

  beforeAll(async () => {
    const authority = await privateCertificateAuthority();
    ca = authority.ca;
    server = createServer(authority.server, (request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        bodies.push(body);
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = async (receiverCa: string | undefined) => {
    const warnings: string[] = [];
    const dispatcher = createNotificationDispatcher({
      internalHosts: ['127.0.0.1'],
      count: () => {},
      warn: (_receiver, message) => warnings.push(message),
      attempts: 1,
    });
    const receiver: NotificationReceiver = {
      id: `team-a/chat-${receiverCa === undefined ? 'without' : 'with'}-ca`,
      delivery: (e) => ({
        url,
        headers: {},
        body: JSON.stringify({ text: e.summary }),
        ...(receiverCa === undefined ? {} : { ca: receiverCa }),
      }),
    };
    dispatcher.notify(receiver, event);
    await dispatcher.idle();
    return warnings;
  };

  it("sends with the Secret's ca.crt", async () => {
    expect(await send(ca)).toEqual([]);
    expect(bodies).toEqual([JSON.stringify({ text: 'applied r1' })]);
  });

  it('sends nothing without it, and says which certificate failed', async () => {
    const warnings = await send(undefined);
    expect(bodies).toHaveLength(1);
    expect(warnings.join('\n')).toMatch(
      /TLS to 127\.0\.0\.1:\d+ failed: the server's certificate is not signed/,
    );
  });
});
