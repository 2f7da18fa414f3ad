import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOn } from './start-probe-server.js';
import {
  isPushEvent,
  parsePushPayload,
  pushProviderOf,
  verifyPushSignature,
  type PushEvent,
} from './push-event.js';

export interface WebhookServerOptions {
  /** `:9292`, `127.0.0.1:0`. */
  readonly address: string;
  /** The receiver's secret, or undefined when no receiver has that name. */
  readonly secretFor: (receiver: string) => Promise<string | undefined>;
  /** Asks for the reconcile of every ApplySet the push concerns; resolves with how many. */
  readonly onPush: (push: PushEvent, receiver: string) => Promise<number> | number;
  /** Requests per receiver per second, on average; default 2. */
  readonly ratePerSecond?: number;
  /** Requests a receiver may send at once before it is limited; default 10. */
  readonly burst?: number;
  readonly now?: () => number;
  readonly logger?: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

export interface WebhookServer {
  readonly port: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The push webhook receiver: `POST /hook/<receiver>` with a GitHub, GitLab or Gitea/Forgejo push
 * payload. The body is checked against the receiver's secret before anything else is read from it; a
 * bad or missing signature is 401 and changes nothing. A good push asks for the reconcile of the
 * ApplySets whose source is that repository and ref (202 with how many). Each receiver is rate-limited
 * (a token bucket; 429 past it), so a flood of hooks cannot turn into a flood of fetches.
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const now = options.now ?? Date.now;
  const rate = options.ratePerSecond ?? 2;
  const burst = options.burst ?? 10;
  const buckets = new Map<string, { tokens: number; at: number }>();
  const take = (receiver: string): boolean => {
    // Names are the caller's choice: the table of buckets must not grow without bound.
    if (!buckets.has(receiver) && buckets.size >= 10_000) buckets.clear();
    const bucket = buckets.get(receiver) ?? { tokens: burst, at: now() };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now() - bucket.at) / 1000) * rate);
    bucket.at = now();
    buckets.set(receiver, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const reply = (status: number, body: object) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(`${JSON.stringify(body)}\n`);
    };
    const receiver = /^\/hook\/([A-Za-z0-9._-]{1,253})$/.exec((request.url ?? '').split('?')[0] ?? '')?.[1];
    if (receiver === undefined) return reply(404, { error: 'no such receiver' });
    if (request.method !== 'POST') return reply(405, { error: 'POST only' });
    if (!take(receiver)) return reply(429, { error: 'too many requests for this receiver' });
    const body = await readBody(request);
    if (body === undefined) return reply(413, { error: `the body is over ${MAX_BODY_BYTES} bytes` });
    const secret = await options.secretFor(receiver);
    if (secret === undefined) return reply(404, { error: 'no such receiver' });
    const provider = pushProviderOf(request.headers);
    if (provider === undefined) return reply(400, { error: 'not a GitHub, GitLab, Gitea or Forgejo event' });
    if (!verifyPushSignature(provider, request.headers, body, secret)) {
      options.logger?.warn({ receiver, provider }, 'webhook: bad signature, ignored');
      return reply(401, { error: 'bad signature' });
    }
    if (!isPushEvent(provider, request.headers)) return reply(200, { ignored: 'not a push event' });
    const push = parsePushPayload(provider, body);
    if ('error' in push) return reply(400, { error: push.error });
    const matched = await options.onPush(push, receiver);
    options.logger?.info(
      { receiver, provider, branch: push.branch, tag: push.tag, matched },
      'webhook: push received',
    );
    return reply(202, { matched });
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.logger?.warn({ err: error }, 'webhook: handling a request failed');
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end('{"error":"internal error"}\n');
    });
  });
  return listenOn(server, options.address);
}

/** The body, or undefined when it is larger than the limit (reading stops there). */
async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
