// Local HTTP receivers for the notification e2e suite: each records what it was sent, answers as told
// (at once, after a delay, or with an error), and checks the shape its provider documents, so a
// message a real Slack or a signature-checking receiver would refuse is refused here too.

import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signatureOf } from '../../src/notify/signed-webhook.js';
import { GROUP, VERSION, type Cluster } from './e2e-kit.js';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface TestReceiver {
  readonly url: string;
  readonly received: Received[];
  /** Requests refused because their shape or signature was wrong. */
  readonly refused: string[];
  close(): Promise<void>;
}

/** How a receiver judges a request: undefined takes it, a string refuses it with that reason. */
type Check = (received: Received) => string | undefined;

/** Slack's incoming webhook refuses a body without `text` (or blocks); we want text, always. */
export const slackShape: Check = ({ body }) => {
  const payload = JSON.parse(body) as { text?: unknown };
  return typeof payload.text === 'string' && payload.text !== '' ? undefined : 'no text';
};

/** The generic webhook's check, as docs/notifications.md tells a receiver to do it. */
export function signedWith(key: string, maxAgeSeconds = 300): Check {
  return ({ headers, body }) => {
    const timestamp = String(headers[TIMESTAMP_HEADER] ?? '');
    const given = Buffer.from(String(headers[SIGNATURE_HEADER] ?? ''));
    const expected = Buffer.from(signatureOf(key, timestamp, body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad signature';
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > maxAgeSeconds) return 'too old';
    return undefined;
  };
}

/** A receiver on loopback; `delayMs` holds every answer that long (a slow receiver). */
export async function startReceiver(
  options: { readonly check?: Check; readonly delayMs?: number; readonly status?: number } = {},
): Promise<TestReceiver & { readonly server: Server }> {
  const received: Received[] = [];
  const refused: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const message = { headers: request.headers, body };
      const problem = options.check?.(message);
      if (problem === undefined) received.push(message);
      else refused.push(problem);
      const answer = () => {
        response.statusCode = problem === undefined ? (options.status ?? 200) : 400;
        response.end(problem ?? 'ok');
      };
      if (options.delayMs === undefined) answer();
      else timers.add(setTimeout(answer, options.delayMs));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    refused,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The states the received messages name, in order (Slack's text or the webhook's JSON). */
export function statesOf(receiver: TestReceiver): string[] {
  return receiver.received.map(({ body }) => {
    const payload = JSON.parse(body) as { state?: string; text?: string };
    return payload.state ?? /: (\w+)( at |:)/.exec(payload.text ?? '')?.[1] ?? '?';
  });
}

/** Creates a Notification selecting the named ApplySets of its namespace, its provider's Secret named. */
export async function createNotification(
  c: Cluster,
  namespace: string,
  name: string,
  provider: { readonly type: string; readonly secret: string },
  applySets: readonly string[],
): Promise<void> {
  await c.custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'notifications',
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Notification',
      metadata: { name },
      spec: {
        applySets: { names: applySets },
        provider: { type: provider.type, secretRef: { name: provider.secret } },
      },
    },
  });
}
