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
  /** The connection and time bounds; the defaults are WEBHOOK_LIMITS. */
  readonly limits?: Partial<WebhookLimits>;
  readonly logger?: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

export interface WebhookServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * What one caller can hold of the receiver, signed or not. The URL is public (forges call it from
 * outside the cluster), so every bound applies before the signature is known: a body is read only up
 * to maxBodyBytes (a forge's push payload is a few KB to a few hundred; GitHub caps its own at 25 MB
 * only for events we ignore), a request must have sent its headers within headersTimeoutMs and all
 * of itself within requestTimeoutMs (a slow-loris connection is cut then), an idle kept-alive
 * connection is closed after keepAliveTimeoutMs, and past maxConnections new connections are refused
 * at accept: with the body bound, at most 64 MiB of bodies are held at once, well inside the pod's
 * 512 MiB. Node checks the two request timeouts every checkIntervalMs.
 */
interface WebhookLimits {
  readonly maxBodyBytes: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly checkIntervalMs: number;
}

const BAD_SIGNATURE_LOG_MS = 10_000;

/** @internal test seam: the limit its tests assert against */
export const WEBHOOK_LIMITS: WebhookLimits = {
  maxBodyBytes: 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 64,
  checkIntervalMs: 1_000,
};

/**
 * The push webhook receiver: `POST /hook/<receiver>` with a GitHub, GitLab or Gitea/Forgejo push
 * payload. The body is checked against the receiver's secret before anything else is read from it; a
 * bad or missing signature is 401 and changes nothing. A good push asks for the reconcile of the
 * ApplySets whose source is that repository and ref (202 with how many). Each receiver is rate-limited
 * (a token bucket; 429 past it), so a flood of hooks cannot turn into a flood of fetches; only signed
 * requests are charged to it, else anyone who knows the URL could spend the forge's tokens and have
 * its real pushes refused. An unsigned request costs at most one bounded body (WebhookLimits).
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const now = options.now ?? Date.now;
  const rate = options.ratePerSecond ?? 2;
  const burst = options.burst ?? 10;
  const limits = { ...WEBHOOK_LIMITS, ...options.limits };
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

  // Anyone may send bad signatures as fast as the connections allow: one warning per receiver per
  // BAD_SIGNATURE_LOG_MS, so that they cannot flood the log either.
  const warnedAt = new Map<string, number>();
  const warnBadSignature = (receiver: string, provider: string) => {
    const last = warnedAt.get(receiver);
    if (last !== undefined && now() - last < BAD_SIGNATURE_LOG_MS) return;
    warnedAt.set(receiver, now());
    options.logger?.warn(
      { receiver, provider },
      `webhook: bad signature, ignored (more for this receiver within ${BAD_SIGNATURE_LOG_MS / 1000} s are not logged)`,
    );
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const reply = (status: number, body: object) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(`${JSON.stringify(body)}\n`);
    };
    // A body left unread would otherwise be read to its end to keep the connection: close it instead.
    const refuse = (status: number, body: object) => {
      response.setHeader('connection', 'close');
      response.once('finish', () => request.destroy());
      reply(status, body);
    };
    const receiver = /^\/hook\/([A-Za-z0-9._-]{1,253})$/.exec((request.url ?? '').split('?')[0] ?? '')?.[1];
    // Refused before the body is read: the connection goes with it.
    if (receiver === undefined) return refuse(404, { error: 'no such receiver' });
    if (request.method !== 'POST') return refuse(405, { error: 'POST only' });
    const secret = await options.secretFor(receiver);
    if (secret === undefined) return refuse(404, { error: 'no such receiver' });
    const tooLarge = { error: `the body is over ${limits.maxBodyBytes} bytes` };
    if (Number(request.headers['content-length'] ?? 0) > limits.maxBodyBytes) return refuse(413, tooLarge);
    const body = await readBody(request, limits.maxBodyBytes);
    if (body === undefined) return refuse(413, tooLarge);
    const provider = pushProviderOf(request.headers);
    if (provider === undefined) return reply(400, { error: 'not a GitHub, GitLab, Gitea or Forgejo event' });
    if (!verifyPushSignature(provider, request.headers, body, secret)) {
      warnBadSignature(receiver, provider);
      return reply(401, { error: 'bad signature' });
    }
    if (!take(receiver)) return reply(429, { error: 'too many requests for this receiver' });
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

  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    (request, response) => {
      handle(request, response).catch((error: unknown) => {
        options.logger?.warn({ err: error }, 'webhook: handling a request failed');
        if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"error":"internal error"}\n');
      });
    },
  );
  server.maxConnections = limits.maxConnections;
  return listenOn(server, options.address);
}

/**
 * The body, or undefined as soon as it passes `maxBytes`: reading stops there and the request is left
 * paused, so the 413 can still be written on its connection (a for-await would destroy it).
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      request.off('data', onData);
      request.pause();
      resolve(undefined);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
    request.once('close', () => reject(new Error('the request was closed before its end')));
  });
}
