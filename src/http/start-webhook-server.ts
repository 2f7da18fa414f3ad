import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOn } from './start-probe-server.js';
import {
  isPushEvent,
  parsePushPayload,
  pushProviderOf,
  verifyPushSignature,
  type PushEvent,
} from './push-event.js';
import {
  isRegistryEnvelope,
  parseRegistryEnvelope,
  verifyRegistryToken,
  type RegistryPush,
} from './registry-event.js';

export interface WebhookServerOptions {
  /** `:9292`, `127.0.0.1:0`. */
  readonly address: string;
  /** The receiver's secret, or undefined when no receiver has that name. */
  readonly secretFor: (receiver: string) => Promise<string | undefined>;
  /** Asks for the reconcile of every ApplySet the push concerns; resolves with how many. */
  readonly onPush: (push: PushEvent, receiver: string) => Promise<number> | number;
  /**
   * The same for a registry's manifest pushes (one envelope may hold several); without it,
   * `/hook/registry/<receiver>` is 404.
   */
  readonly onRegistryPush?: (pushes: readonly RegistryPush[], receiver: string) => Promise<number> | number;
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

/** `POST /hook/<receiver>`: a forge's push. Receiver names are Secret keys: `[A-Za-z0-9._-]`. */
const FORGE_ROUTE = /^\/hook\/([A-Za-z0-9._-]{1,253})$/;
/** `POST /hook/registry/<receiver>`: a registry's notification envelope. */
const REGISTRY_ROUTE = /^\/hook\/registry\/([A-Za-z0-9._-]{1,253})$/;

/**
 * The push webhook receiver: `POST /hook/<receiver>` with a GitHub, GitLab or Gitea/Forgejo push
 * payload, `POST /hook/registry/<receiver>` with an OCI registry's (distribution's) notification
 * envelope. The request is checked against the receiver's secret before anything else is read from its
 * body; a bad or missing signature or token is 401 and changes nothing. A good push asks for the
 * reconcile of the ApplySets whose source is that repository and ref (202 with how many). Each receiver
 * is rate-limited (a token bucket; 429 past it), so a flood of hooks cannot turn into a flood of
 * fetches; only signed requests are charged to it, else anyone who knows the URL could spend the
 * forge's tokens and have its real pushes refused. An unsigned request costs at most one bounded body
 * (WebhookLimits), a registry's none.
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const limits = { ...WEBHOOK_LIMITS, ...options.limits };
  const guard = createGuard(options, limits);
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const exchange = exchangeOf(request, response);
    const path = (request.url ?? '').split('?')[0] ?? '';
    const registryReceiver = REGISTRY_ROUTE.exec(path)?.[1];
    const receiver = registryReceiver ?? FORGE_ROUTE.exec(path)?.[1];
    const onRegistryPush = options.onRegistryPush;
    // Refused before the body is read: the connection goes with it.
    if (receiver === undefined || (registryReceiver !== undefined && onRegistryPush === undefined)) {
      return exchange.refuse(404, { error: 'no such receiver' });
    }
    if (request.method !== 'POST') return exchange.refuse(405, { error: 'POST only' });
    const secret = await options.secretFor(receiver);
    if (secret === undefined) return exchange.refuse(404, { error: 'no such receiver' });
    if (registryReceiver === undefined || onRegistryPush === undefined) {
      return handleForgePush(exchange, receiver, secret, guard, options.onPush);
    }
    return handleRegistryPush(exchange, receiver, secret, guard, onRegistryPush);
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

/** One request and the two ways of answering it. */
interface Exchange {
  readonly request: IncomingMessage;
  reply(status: number, body: object): void;
  /** Answers and closes the connection: for a request whose body is left unread. */
  refuse(status: number, body: object): void;
}

function exchangeOf(request: IncomingMessage, response: ServerResponse): Exchange {
  const reply = (status: number, body: object) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(`${JSON.stringify(body)}\n`);
  };
  return {
    request,
    reply,
    // A body left unread would otherwise be read to its end to keep the connection: close it instead.
    refuse: (status, body) => {
      response.setHeader('connection', 'close');
      response.once('finish', () => request.destroy());
      reply(status, body);
    },
  };
}

/** What every receiver shares: the bounds, its rate limit and the log of refused requests. */
interface Guard {
  readonly limits: WebhookLimits;
  /** Charges one request to `bucket`'s rate; false when it has none left. */
  take(bucket: string): boolean;
  /** Logs a request refused for its signature or token, at most once per bucket per BAD_SIGNATURE_LOG_MS. */
  warnRefused(bucket: string, fields: object, what: string): void;
  readonly logger: WebhookServerOptions['logger'];
}

function createGuard(options: WebhookServerOptions, limits: WebhookLimits): Guard {
  const now = options.now ?? Date.now;
  const rate = options.ratePerSecond ?? 2;
  const burst = options.burst ?? 10;
  const buckets = new Map<string, { tokens: number; at: number }>();
  // Anyone may send bad signatures as fast as the connections allow: one warning per receiver per
  // BAD_SIGNATURE_LOG_MS, so that they cannot flood the log either.
  const warnedAt = new Map<string, number>();
  return {
    limits,
    logger: options.logger,
    take: (bucketName) => {
      // Names are the caller's choice: the table of buckets must not grow without bound.
      if (!buckets.has(bucketName) && buckets.size >= 10_000) buckets.clear();
      const bucket = buckets.get(bucketName) ?? { tokens: burst, at: now() };
      bucket.tokens = Math.min(burst, bucket.tokens + ((now() - bucket.at) / 1000) * rate);
      bucket.at = now();
      buckets.set(bucketName, bucket);
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
    warnRefused: (bucketName, fields, what) => {
      const last = warnedAt.get(bucketName);
      if (last !== undefined && now() - last < BAD_SIGNATURE_LOG_MS) return;
      if (!warnedAt.has(bucketName) && warnedAt.size >= 10_000) warnedAt.clear();
      warnedAt.set(bucketName, now());
      options.logger?.warn(
        fields,
        `webhook: ${what}, ignored (more for this receiver within ${BAD_SIGNATURE_LOG_MS / 1000} s are not logged)`,
      );
    },
  };
}

/** The body within the bound, or undefined once the 413 is sent. */
async function boundedBody(exchange: Exchange, limits: WebhookLimits): Promise<Buffer | undefined> {
  const tooLarge = { error: `the body is over ${limits.maxBodyBytes} bytes` };
  if (Number(exchange.request.headers['content-length'] ?? 0) > limits.maxBodyBytes) {
    exchange.refuse(413, tooLarge);
    return undefined;
  }
  const body = await readBody(exchange.request, limits.maxBodyBytes);
  if (body === undefined) exchange.refuse(413, tooLarge);
  return body;
}

/** A forge's push: the signature is of the body, so the body is read (bounded) before it is checked. */
async function handleForgePush(
  exchange: Exchange,
  receiver: string,
  secret: string,
  guard: Guard,
  onPush: WebhookServerOptions['onPush'],
): Promise<void> {
  const { request, reply } = exchange;
  const body = await boundedBody(exchange, guard.limits);
  if (body === undefined) return;
  const provider = pushProviderOf(request.headers);
  if (provider === undefined) return reply(400, { error: 'not a GitHub, GitLab, Gitea or Forgejo event' });
  if (!verifyPushSignature(provider, request.headers, body, secret)) {
    guard.warnRefused(receiver, { receiver, provider }, 'bad signature');
    return reply(401, { error: 'bad signature' });
  }
  if (!guard.take(receiver)) return reply(429, { error: 'too many requests for this receiver' });
  if (!isPushEvent(provider, request.headers)) return reply(200, { ignored: 'not a push event' });
  const push = parsePushPayload(provider, body);
  if ('error' in push) return reply(400, { error: push.error });
  const matched = await onPush(push, receiver);
  guard.logger?.info(
    { receiver, provider, branch: push.branch, tag: push.tag, matched },
    'webhook: push received',
  );
  return reply(202, { matched });
}

/**
 * A registry's notification envelope. Its token is a header, so a wrong or missing one is refused
 * before a byte of the body is read. Answers matter to the sender: distribution retries an envelope
 * that was not answered 2xx or 3xx until it is (holding the ones after it), so whatever it sends that
 * is not a manifest push (a blob push per layer, every pull) is acknowledged with 200, uncharged.
 */
async function handleRegistryPush(
  exchange: Exchange,
  receiver: string,
  secret: string,
  guard: Guard,
  onRegistryPush: NonNullable<WebhookServerOptions['onRegistryPush']>,
): Promise<void> {
  const { request, reply, refuse } = exchange;
  const bucket = `registry/${receiver}`;
  if (!verifyRegistryToken(request.headers, secret)) {
    guard.warnRefused(bucket, { receiver, provider: 'registry' }, 'bad token');
    return refuse(401, { error: 'bad token' });
  }
  if (!isRegistryEnvelope(request.headers)) {
    return refuse(415, {
      error:
        'not a registry notification envelope (application/vnd.docker.distribution.events.v1+json or v2+json)',
    });
  }
  const body = await boundedBody(exchange, guard.limits);
  if (body === undefined) return;
  const pushes = parseRegistryEnvelope(body);
  if ('error' in pushes) return reply(400, { error: pushes.error });
  if (pushes.length === 0) return reply(200, { ignored: 'no manifest push' });
  if (!guard.take(bucket)) return reply(429, { error: 'too many requests for this receiver' });
  const matched = await onRegistryPush(pushes, receiver);
  guard.logger?.info(
    {
      receiver,
      provider: 'registry',
      pushes: pushes.map((push) => `${push.repository}:${push.tag ?? push.digest ?? ''}`),
      matched,
    },
    'webhook: registry push received',
  );
  return reply(202, { matched });
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
