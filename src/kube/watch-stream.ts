import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { DestinationPolicy } from '../net/destination-policy.js';
import { ResponseTooLargeError } from '../net/destination-refused-error.js';
import { openOutbound } from '../net/outbound-request.js';
import { KubeTransportError, kubeApiErrorFrom } from './kube-api-error.js';
import { parseJsonLossless } from '../manifests/lossless-json.js';

/** One watch connection: `GET <path>?watch=true`, read as the server streams it, one event a line. */
export interface KubeWatchRequest {
  /** The collection, e.g. `/apis/applyset.dev/v1alpha1/applysets`. */
  readonly path: string;
  /** `resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`; `watch=true` is added. */
  readonly query?: Readonly<Record<string, string>>;
  /** The Accept header; default `application/json` (supervised-informer.ts asks for metadata alone). */
  readonly accept?: string;
  /** Each event as the server sent it: its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and object. */
  readonly onEvent: (type: string, object: unknown) => void;
  /** Called when the server accepted the watch (a 2xx answer's headers arrived), before any event. */
  readonly onOpen?: () => void;
  readonly signal: AbortSignal;
}

/**
 * Sends the watch and delivers its events until the server ends the response (resolves), the
 * connection fails (KubeTransportError), the server refuses it (KubeApiError) or `signal` aborts
 * (rejects with its reason). `timeoutMs` bounds only the wait for the answer's headers: a watch is
 * silent for minutes when nothing changes, so judging a quiet stream is the caller's watchdog's job.
 */
export function streamWatch(
  url: URL,
  opts: RequestOptions & { headers: Record<string, string> },
  watch: KubeWatchRequest,
  through: { readonly timeoutMs: number; readonly policy: DestinationPolicy },
): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      if (error === undefined) resolve();
      else reject(error);
    };
    const fail = (cause: unknown) =>
      settle(
        watch.signal.aborted ? watch.signal.reason : new KubeTransportError('GET', watch.path, { cause }),
      );
    const { headers, ...transport } = opts;
    openOutbound({
      url,
      method: 'GET',
      policy: through.policy,
      headers,
      signal: watch.signal,
      transport,
      idleTimeoutMs: through.timeoutMs,
    }).then(({ response, abort }) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 299) return refuse(response, watch.path, status, settle);
      watch.onOpen?.();
      // One event is bounded as one answer of the destination is (a remote cluster's 64 MiB).
      const bound = { limit: through.policy.maxBodyBytes, kind: through.policy.kind, where: url.host };
      readEvents(response, watch, settle, (error) => abort(error as Error), bound);
      response.on('error', fail);
      return undefined;
    }, fail);
  });
}

/** A refused watch (403, 404, 410 at the start): the Status body read whole, as any other answer. */
function refuse(
  response: IncomingMessage,
  path: string,
  status: number,
  settle: (error: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  let length = 0;
  response.on('data', (chunk: Buffer) => {
    length += chunk.length;
    // A Status is a few hundred bytes; a refusal's body past 1 MiB is not one, and is not kept.
    if (length <= 1024 * 1024) chunks.push(chunk);
    else response.destroy();
  });
  response.on('close', () => settle(kubeApiErrorFrom('GET', path, status, '')));
  response.on('end', () =>
    settle(kubeApiErrorFrom('GET', path, status, Buffer.concat(chunks).toString('utf8'))),
  );
}

/**
 * Splits the body into lines and hands each event on. The end of the body, or the connection
 * closing under it, ends the watch normally: the caller resumes from the last version it saw.
 */
function readEvents(
  response: IncomingMessage,
  watch: KubeWatchRequest,
  settle: (error?: unknown) => void,
  abandon: (error: unknown) => void,
  bound: {
    readonly limit: number | undefined;
    readonly kind: DestinationPolicy['kind'];
    readonly where: string;
  },
): void {
  let pending = '';
  const deliver = (line: string) => {
    // The caller gave up on this watch (410 Gone, a stall): the rest of the chunk is not delivered.
    if (watch.signal.aborted) return;
    const event = parseEventLine(line);
    if (event === undefined) return;
    try {
      watch.onEvent(event.type, event.object);
    } catch (error) {
      // The handler's failure ends this watch, visibly, rather than being lost inside the stream.
      settle(error);
      abandon(error);
    }
  };
  const fail = (error: Error) => {
    settle(new KubeTransportError('GET', watch.path, { cause: error }));
    abandon(error);
  };
  // Decoding as a stream keeps a character split between two chunks whole.
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    pending += chunk;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      deliver(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
    if (bound.limit !== undefined && pending.length > bound.limit) {
      const error = new ResponseTooLargeError(bound.kind, `${bound.where} (one watch event)`, bound.limit);
      pending = '';
      fail(error);
    }
  });
  response.on('end', () => {
    deliver(pending);
    settle();
  });
  response.on('close', () => settle());
}

/**
 * `{"type": ..., "object": ...}`; a line that is not such JSON (an empty line, a proxy's noise) is no
 * event and is skipped, as client-node's Watch skips it: the stall watchdog notices a stream that
 * delivers nothing else.
 */
function parseEventLine(line: string): { type: string; object: unknown } | undefined {
  if (line.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = parseJsonLossless(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  return { type: String(type), object };
}
