/**
 * The one door for requests out of the controller (docs/multi-tenancy.md#the-outbound-door): Git, remote
 * API servers, the controller's own API server, notification receivers and forges. Every request is
 * checked against the address policy of its kind before it is sent (IP literals, names, the scheme) and
 * again on what DNS answers at connect time (guardedLookup); redirects are never followed here, so a
 * caller that follows one comes back through this door with the new URL. Connecting has its own timeout,
 * and a buffered answer is read up to its kind's bound, then the connection is closed. A lint rule keeps
 * every other folder from opening a connection itself (eslint.config.js).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { CONNECT_TIMEOUT_MS, type DestinationPolicy } from './destination-policy.js';
import { DestinationRefusedError, ResponseTooLargeError } from './destination-refused-error.js';
import { destinationUrlRefusal } from './destination-url-refusal.js';
import { guardedLookup } from './guarded-lookup.js';
import { openTunnel, outboundProxyOf, type OutboundProxy, type TunnelTls } from './outbound-proxy.js';
import { proxyFor } from './proxy-environment.js';

/** What a caller may set on the connection: TLS material and a keep-alive agent, nothing of the address. */
type OutboundTransport = Omit<
  RequestOptions,
  'headers' | 'method' | 'signal' | 'timeout' | 'lookup' | 'host' | 'hostname' | 'port' | 'path'
>;

export interface OutboundRequest {
  readonly url: URL;
  readonly method: string;
  readonly policy: DestinationPolicy;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly signal?: AbortSignal | undefined;
  readonly transport?: OutboundTransport;
  /** A smaller bound than the policy's for this request (a remote `/version`). */
  readonly maxBodyBytes?: number;
  /** How long the socket may stay silent before the answer's headers; default none. */
  readonly idleTimeoutMs?: number;
  /** Default CONNECT_TIMEOUT_MS. */
  readonly connectTimeoutMs?: number;
  /** A guardedLookup over another resolver (tests that play DNS rebinding); default the policy's. */
  readonly lookup?: LookupFunction;
  /** A tenant's proxy (spec.source.proxySecretRef); default the policy's proxies (HTTPS_PROXY …), if any. */
  readonly proxy?: OutboundProxy | undefined;
}

/** An answer read whole, within its bound. */
export interface BufferedAnswer {
  readonly status: number;
  readonly response: IncomingMessage;
  readonly body: Buffer;
}

/** The lookup the policy's sockets resolve names with (for a keep-alive agent made by the caller). */
export function destinationLookup(policy: DestinationPolicy): LookupFunction | undefined {
  return policy.checkAddresses
    ? guardedLookup(undefined, policy.allowedHosts, policy.reading.refusePrivate === true)
    : undefined;
}

/** Throws DestinationRefusedError when the policy refuses the URL itself (before DNS). */
function checkDestination(policy: DestinationPolicy, url: URL): void {
  if (!policy.checkAddresses) return;
  // Credentials travel in Secrets bound to hosts, never in the address (where logs and statuses show it).
  if (url.username !== '' || url.password !== '') {
    throw new DestinationRefusedError(
      policy.kind,
      url.host,
      'the address carries credentials (user:password@)',
    );
  }
  const refusal = destinationUrlRefusal(url.href, policy.allowedHosts, policy.reading);
  if (refusal !== undefined) throw new DestinationRefusedError(policy.kind, url.host, refusal);
}

/**
 * Sends the request and resolves with the answer once its headers arrived, its body still to read (a
 * watch, a Git pack: their readers bound it). Rejects with DestinationRefusedError before any connection,
 * with SourceAddressRefusedError when DNS answers a refused address, or with the network's error.
 */
export function openOutbound(
  request: OutboundRequest,
): Promise<{ readonly response: IncomingMessage; readonly abort: (error?: Error) => void }> {
  checkDestination(request.policy, request.url);
  const proxy = request.proxy ?? operatorProxy(request.policy, request.url);
  // A tenant's proxy is a destination the tenant names: checked as the source itself is.
  if (proxy?.tenant === true) checkDestination(request.policy, proxy.url);
  request.signal?.throwIfAborted();
  const lookup = request.lookup ?? destinationLookup(request.policy);
  const route = routeOf(request, proxy, lookup);
  return new Promise((resolve, reject) => {
    const outgoing = route.send(
      route.target,
      {
        ...request.transport,
        ...route.options,
        method: request.method,
        headers: { ...request.headers, ...route.headers },
        ...(request.signal === undefined ? {} : { signal: request.signal }),
        ...(request.idleTimeoutMs === undefined ? {} : { timeout: request.idleTimeoutMs }),
      },
      (response) => {
        outgoing.setTimeout(0);
        resolve({ response, abort: (error) => outgoing.destroy(error) });
      },
    );
    const connectMs = request.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    outgoing.on('socket', (socket) => {
      // A keep-alive socket from the agent is connected already.
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => outgoing.destroy(new Error(`no connection within ${connectMs} ms`)),
        connectMs,
      );
      socket.once(request.url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    outgoing.on('timeout', () =>
      outgoing.destroy(new Error(`no answer within ${request.idleTimeoutMs ?? 0} ms`)),
    );
    outgoing.on('error', (error) =>
      reject(request.signal?.aborted === true ? (request.signal.reason as Error) : error),
    );
    outgoing.end(request.body);
  });
}

/** The operator's proxy of the URL (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), for the kinds given them. */
function operatorProxy(policy: DestinationPolicy, url: URL): OutboundProxy | undefined {
  const address = proxyFor(policy.proxies, url);
  return address === undefined ? undefined : outboundProxyOf(address, false);
}

/**
 * How the request reaches its server: directly; through a CONNECT tunnel for https (the tunnel made in
 * createConnection, so the request itself is sent as without a proxy); or as an absolute-form request to
 * the proxy for http. The target's name is checked before (checkDestination); through a proxy the proxy
 * resolves it, so the connect-time check of DNS's answer (guardedLookup) applies to a tenant's proxy's own
 * address only (docs/tls-and-proxies.md).
 */
function routeOf(
  request: OutboundRequest,
  proxy: OutboundProxy | undefined,
  lookup: LookupFunction | undefined,
) {
  const proxyLookup = proxy?.tenant === true && lookup !== undefined ? { lookup } : {};
  const https = request.url.protocol === 'https:';
  if (proxy === undefined) {
    return {
      send: https ? httpsRequest : httpRequest,
      target: request.url,
      options: lookup === undefined ? {} : { lookup },
      headers: {},
    };
  }
  if (!https) {
    const authorization =
      proxy.authorization === undefined ? {} : { 'proxy-authorization': proxy.authorization };
    return {
      send: httpRequest,
      target: proxy.url,
      options: { ...proxyLookup, path: request.url.href, agent: undefined },
      headers: { host: request.url.host, ...authorization },
    };
  }
  const tunnel = {
    tls: { ...pick(request.transport) },
    lookup: proxyLookup.lookup,
    signal: request.signal,
    timeoutMs: request.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
  };
  const createConnection: RequestOptions['createConnection'] = (_options, oncreate) => {
    openTunnel(proxy, request.url, tunnel).then(
      (socket) => oncreate(null, socket),
      (error: Error) => oncreate(error, undefined as never),
    );
    return undefined;
  };
  return {
    send: httpsRequest,
    target: request.url,
    options: { agent: undefined, createConnection },
    headers: {},
  };
}

/** What of the caller's transport the tunnel's TLS takes: trust, a client certificate, a kubeconfig's TLS settings. */
function pick(transport: OutboundTransport | undefined): TunnelTls {
  if (transport === undefined) return {};
  const { ca, cert, key, servername, rejectUnauthorized } = transport;
  return Object.fromEntries(
    Object.entries({ ca, cert, key, servername, rejectUnauthorized }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

/**
 * Sends the request and reads its answer whole, up to the bound (the request's, else its policy's): past
 * it the connection is closed at once and ResponseTooLargeError raised, so a hostile server's endless
 * body costs the controller that many bytes, not its memory.
 */
export async function sendOutbound(request: OutboundRequest): Promise<BufferedAnswer> {
  const { response, abort } = await openOutbound(request);
  const limit = request.maxBodyBytes ?? request.policy.maxBodyBytes;
  const where = `${request.url.host}${request.url.pathname}`;
  const body = await readBounded(response, limit, () => {
    const error = new ResponseTooLargeError(request.policy.kind, where, limit ?? 0);
    // The connection is closed without the error: it is this promise's to say, and an answer already
    // complete has no listener left for an 'error' event, which would be thrown as uncaught.
    abort();
    return error;
  });
  return { status: response.statusCode ?? 0, response, body };
}

function readBounded(
  response: IncomingMessage,
  limit: number | undefined,
  tooLarge: () => Error,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    response.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (limit !== undefined && length > limit) {
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', reject);
    response.on('aborted', () => reject(new Error('the connection closed before the answer was complete')));
  });
}
