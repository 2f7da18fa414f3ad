import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import type { DestinationPolicy } from '../net/destination-policy.js';
import { sendOutbound } from '../net/outbound-request.js';
import type { JsonValue } from '../manifests/json-value.js';
import { KubeApiError, KubeTransportError, kubeApiErrorFrom } from './kube-api-error.js';
import { createKubeConnection, type KubeConnection } from './kube-connection.js';
import type { KubeCredentials } from './kube-credentials.js';
import { streamWatch, type KubeWatchRequest } from './watch-stream.js';
import { parseJsonLossless } from '../manifests/lossless-json.js';
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { inSpan, type SpanNotes } from '../observability/trace-span.js';

/** @internal test seam: the shape its tests build */
export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  readonly method: KubeMethod;
  /** Absolute API path, e.g. `/api/v1/namespaces/x/configmaps`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Sent byte for byte: the merge engine already encoded patches the way kubectl does. */
  readonly body?: string;
  readonly contentType?: string;
  /**
   * The Accept header; default `application/json` (aggregated discovery asks for its own media type).
   * `text/plain` first (a Pod's log: `text/plain, *\/*`) is text mode: a 2xx answer's body is returned as a string, not parsed,
   * and bounded by `maxBodyBytes`, else TEXT_MAX_BODY_BYTES.
   */
  readonly accept?: string;
  readonly signal?: AbortSignal;
  /**
   * Called with the text of each `Warning` header of the answer (RFC 7234 warn-text, as kubectl
   * prints them: an unknown field under fieldValidation=Warn, a deprecated API version).
   */
  readonly onWarning?: (warning: string) => void;
  /**
   * Called with the byte length of a 2xx answer's body as it was received, before it is decoded: what
   * a cache of the decoded document weighs, without serialising the document again to find out.
   */
  readonly onBodyBytes?: (bytes: number) => void;
  /** A smaller bound on the answer's body than the connection's (a remote cluster's `/version`). */
  readonly maxBodyBytes?: number;
}

/** Raw JSON access to one API server as one user: the only door the shell has to the cluster. */
export interface KubeClient {
  readonly server: string;
  /**
   * Resolves with the decoded JSON body of a 2xx answer (its text, for `accept: 'text/plain'`); rejects
   * with KubeApiError or KubeTransportError.
   */
  request(request: KubeRequest): Promise<JsonValue>;
  /**
   * One watch connection, on the same agent, credentials and impersonation as `request`, counted as
   * a GET: resolves when the server ends it, rejects as `request` does or with the signal's reason.
   */
  watch(request: KubeWatchRequest): Promise<void>;
}

/**
 * Where a client's requests go: a connection of its own over the kubeconfig's credentials (made once,
 * where the kubeconfig was loaded: createKubeCredentials), or a shared connection.
 */
export type KubeClientOptions = KubeClientSettings &
  (
    | {
        readonly credentials: KubeCredentials;
        /** Sockets kept open to the server, which bounds the real concurrency; default 32. */
        readonly maxSockets?: number;
      }
    | { readonly connection: KubeConnection }
  );

interface KubeClientSettings {
  /**
   * Act as this user on every request (`Impersonate-User`), e.g.
   * `system:serviceaccount:<ns>:<name>` for an ApplySet's `serviceAccountName`, so RBAC limits what
   * the set may touch.
   */
  readonly impersonateUser?: string;
  /** Called once per request sent (method and path), for request counting in tests and benchmarks. */
  readonly onRequest?: (method: KubeMethod, path: string) => void;
  /** Per-request timeout; default 30 s. */
  readonly timeoutMs?: number;
  /**
   * Called synchronously right before every request that writes (anything but GET) is sent, in the
   * same tick as the send. It throws to refuse the write: a controller replica that can no longer
   * prove it holds the leader Lease must not write, whatever its reconcile was in the middle of.
   */
  readonly writeFence?: () => void;
}

/**
 * A thin client over a kubeconfig's credentials: they supply the server, TLS material and the
 * Authorization header (see createKubeConnection), and we send raw JSON so patch bodies and content
 * types are exactly kubectl's. A 401 answer to a credential that can be fetched again (exec plugin, tokenFile) drops
 * it and sends the request once more, as client-go's exec authenticator does; a 429 or 5xx answer with
 * `Retry-After` is sent again after that wait, and a GET whose connection broke after a second, as
 * client-go's request does (retryAfterMs, brokenGet).
 */
export function createKubeClient(options: KubeClientOptions): KubeClient {
  const connection =
    'connection' in options
      ? options.connection
      : createKubeConnection({
          credentials: options.credentials,
          ...(options.maxSockets === undefined ? {} : { maxSockets: options.maxSockets }),
        });
  const { server } = connection;
  const base = new URL(server);
  const timeoutMs = options.timeoutMs ?? 30_000;

  /** The connection options and the headers every request carries: credentials, impersonation, Accept. */
  const connect = async (
    path: string,
    query: Readonly<Record<string, string>> | undefined,
    accept = 'application/json',
  ): Promise<{ url: URL; opts: RequestOptions; headers: Record<string, string> }> => {
    const opts = await connection.options();
    const url = new URL(base.pathname.replace(/\/$/, '') + path, base);
    for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = { ...opts.headers, accept };
    if (options.impersonateUser !== undefined) headers['Impersonate-User'] = options.impersonateUser;
    return { url, opts, headers };
  };

  const sendOnce = async (asked: KubeRequest): Promise<Answer> => {
    const req = isTextMode(asked)
      ? { ...asked, maxBodyBytes: asked.maxBodyBytes ?? TEXT_MAX_BODY_BYTES }
      : asked;
    req.signal?.throwIfAborted();
    const { url, opts, headers } = await connect(req.path, req.query, req.accept);
    if (req.body !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(req.body, 'utf8'));
    }
    if (req.method !== 'GET') options.writeFence?.();
    options.onRequest?.(req.method, req.path);
    return send(url, { ...opts, headers }, req, { timeoutMs, policy: connection.policy });
  };

  // Within a traced reconcile, each request is a span of its own (docs/monitoring.md#tracing).
  const request = (req: KubeRequest): Promise<JsonValue> =>
    inSpan('kube.request', requestAttributes(base, req), (notes) => answer(req, notes), SpanKind.CLIENT);

  const answer = async (req: KubeRequest, notes: SpanNotes): Promise<JsonValue> => {
    const attempt = () => answerOrBrokenGet(req, () => sendOnce(req));
    let first = await attempt();
    if (!(first instanceof Error) && first.status === 401 && connection.unauthorized()) {
      first = await attempt();
    }
    const { sent, resends } = await resendWhileAsked(first, attempt, req.signal);
    if (resends > 0) notes.set({ 'http.request.resend_count': resends });
    if (sent instanceof Error) throw sent;
    const { status, body, bytes } = sent;
    notes.set({ 'http.response.status_code': status });
    if (status < 200 || status > 299) throw kubeApiErrorFrom(req.method, req.path, status, body);
    req.onBodyBytes?.(bytes);
    if (isTextMode(req)) return body;
    if (body === '') return null;
    try {
      return parseJsonLossless(body) as JsonValue;
    } catch (error) {
      throw new KubeTransportError(req.method, req.path, { cause: error });
    }
  };

  const watch = async (req: KubeWatchRequest): Promise<void> => {
    req.signal.throwIfAborted();
    const { url, opts, headers } = await connect(req.path, { ...req.query, watch: 'true' }, req.accept);
    req.signal.throwIfAborted();
    options.onRequest?.('GET', req.path);
    try {
      await streamWatch(url, { ...opts, headers }, req, { timeoutMs, policy: connection.policy });
    } catch (error) {
      // The watch's caller connects again; it should then bring a fresh credential.
      if (error instanceof KubeApiError && error.status === 401) connection.unauthorized();
      throw error;
    }
  };

  return { server, request, watch };
}

/** The bound on a text answer's body when the request gives none: a log is read in part, never whole. */
const TEXT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * `accept` naming `text/plain` first (`text/plain, *\/*`, parameters allowed): the answer is text,
 * returned as it is. A log must be asked with `*\/*` too, as kubectl does: the API server answers an
 * Accept of `text/plain` alone with 406 NotAcceptable.
 */
function isTextMode(req: KubeRequest): boolean {
  return req.accept?.split(',')[0]?.split(';')[0]?.trim().toLowerCase() === 'text/plain';
}

/** A request's span attributes, in OpenTelemetry's HTTP client conventions: never its query or body. */
function requestAttributes(base: URL, req: KubeRequest): Attributes {
  return {
    'http.request.method': req.method,
    'url.path': req.path,
    'server.address': base.hostname,
    ...(base.port === '' ? {} : { 'server.port': Number(base.port) }),
  };
}

/** An answer: its status, its body as text, and the body's length in bytes as received. */
interface Answer {
  readonly status: number;
  readonly body: string;
  readonly bytes: number;
  /** The `Retry-After` header, when the answer has one. */
  readonly retryAfter?: string;
}

/** client-go's bound on sending one request again (after Retry-After, or a GET's broken connection). */
const MAX_RESENDS = 10;
/** The longest wait honoured: a remote cluster's server must not park a reconcile for an hour. */
const MAX_RETRY_AFTER_MS = 10_000;
/** The wait before a GET whose connection broke is sent again: client-go's, one second. */
const BROKEN_CONNECTION_WAIT_MS = 1000;

/**
 * A GET whose connection was reset or closed before the answer (an API server restarting, a load
 * balancer dropping an idle connection): client-go sends it again, being a read. A write is not,
 * since the server may have done it; nor is a request that timed out.
 */
function brokenGet(req: KubeRequest, error: unknown): error is KubeTransportError {
  if (req.method !== 'GET' || !(error instanceof KubeTransportError)) return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

function waitBeforeResend(sent: Answer | KubeTransportError): number | undefined {
  return sent instanceof Error ? BROKEN_CONNECTION_WAIT_MS : retryAfterMs(sent);
}

/** The answer of `send`, or the broken connection of a GET, which may be sent again. */
async function answerOrBrokenGet(
  req: KubeRequest,
  send: () => Promise<Answer>,
): Promise<Answer | KubeTransportError> {
  try {
    return await send();
  } catch (error) {
    if (brokenGet(req, error)) return error;
    throw error;
  }
}

/**
 * The server asked to be asked again later (API Priority and Fairness turning a request away, a CRD's
 * storage initializing), or a GET's connection broke: as client-go does, the same request again after
 * the wait the server names (a second for the broken connection), at most MAX_RESENDS times.
 */
async function resendWhileAsked(
  first: Answer | KubeTransportError,
  attempt: () => Promise<Answer | KubeTransportError>,
  signal: AbortSignal | undefined,
): Promise<{ sent: Answer | KubeTransportError; resends: number }> {
  let sent = first;
  let resends = 0;
  for (let wait = waitBeforeResend(sent); wait !== undefined && resends < MAX_RESENDS; ) {
    await waitFor(wait, signal);
    sent = await attempt();
    resends += 1;
    wait = waitBeforeResend(sent);
  }
  return { sent, resends };
}

/**
 * How long to wait before sending the request again: the `Retry-After` seconds of a 429 or 5xx answer
 * (client-go's rule; an HTTP date is not read, as there), at most MAX_RETRY_AFTER_MS. Undefined: the
 * answer stands.
 * @internal test seam: a pure rule its unit test runs alone
 */
export function retryAfterMs(answer: Pick<Answer, 'status' | 'retryAfter'>): number | undefined {
  if (answer.status !== 429 && answer.status < 500) return undefined;
  const seconds = answer.retryAfter?.trim();
  if (seconds === undefined || !/^[0-9]+$/.test(seconds)) return undefined;
  return Math.min(Number(seconds) * 1000, MAX_RETRY_AFTER_MS);
}

/** Waits `ms`; an abort ends the wait at once with the signal's reason, as an aborted send does. */
async function waitFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(ms, undefined, signal === undefined ? undefined : { signal });
  } catch (error) {
    throw signal?.aborted === true ? (signal.reason as Error) : error;
  }
}

async function send(
  url: URL,
  opts: RequestOptions & { headers: Record<string, string> },
  req: KubeRequest,
  through: { readonly timeoutMs: number; readonly policy: DestinationPolicy },
): Promise<Answer> {
  const { headers, ...transport } = opts;
  let answer: Awaited<ReturnType<typeof sendOutbound>>;
  try {
    answer = await sendOutbound({
      url,
      method: req.method,
      policy: through.policy,
      headers,
      ...(req.body === undefined ? {} : { body: req.body }),
      signal: req.signal,
      transport,
      idleTimeoutMs: through.timeoutMs,
      ...(req.maxBodyBytes === undefined ? {} : { maxBodyBytes: req.maxBodyBytes }),
    });
  } catch (error) {
    if (req.signal?.aborted === true) throw req.signal.reason as Error;
    throw new KubeTransportError(req.method, req.path, { cause: error });
  }
  if (req.onWarning !== undefined) for (const text of warningTexts(answer.response)) req.onWarning(text);
  const retryAfter = answer.response.headers['retry-after'];
  return {
    status: answer.status,
    body: answer.body.toString('utf8'),
    bytes: answer.body.length,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  };
}

/**
 * The warn-text of each `Warning: 299 - "text"` header, unquoted, as client-go's WarningHandler
 * reads them; a header in another form is passed on whole.
 */
function warningTexts(response: Pick<IncomingMessage, 'headersDistinct'>): string[] {
  const values = response.headersDistinct['warning'] ?? [];
  const texts: string[] = [];
  for (const value of values) {
    // One header may hold several comma-separated warnings; the text itself is a quoted string.
    for (const match of value.matchAll(/\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/g)) {
      texts.push((match[1] ?? '').replace(/\\(.)/g, '$1'));
    }
    if (!/\d{3}\s+\S+\s+"/.test(value)) texts.push(value);
  }
  return texts;
}
