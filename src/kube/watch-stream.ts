import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { KubeTransportError, kubeApiErrorFrom } from './kube-api-error.js';
import { parseJsonLossless } from '../manifests/lossless-json.js';

/** One watch connection: `GET <path>?watch=true`, read as the server streams it, one event a line. */
export interface KubeWatchRequest {
  /** The collection, e.g. `/apis/applyset.dev/v1alpha1/applysets`. */
  readonly path: string;
  /** `resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`; `watch=true` is added. */
  readonly query?: Readonly<Record<string, string>>;
  /** Each event as the server sent it: its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and object. */
  readonly onEvent: (type: string, object: unknown) => void;
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
  opts: RequestOptions,
  watch: KubeWatchRequest,
  timeoutMs: number,
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
    const doRequest = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = doRequest(
      url,
      { ...opts, method: 'GET', signal: watch.signal, timeout: timeoutMs },
      (response: IncomingMessage) => {
        outgoing.setTimeout(0);
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 299) return refuse(response, watch.path, status, settle);
        readEvents(response, watch, settle, (error) => outgoing.destroy(error as Error));
        response.on('error', fail);
        return undefined;
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', fail);
    outgoing.end();
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
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
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
  // Decoding as a stream keeps a character split between two chunks whole.
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    pending += chunk;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      deliver(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
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
