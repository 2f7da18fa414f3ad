import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import type { LookupFunction } from 'node:net';
import type { DestinationPolicy } from '../net/destination-policy.js';
import { gitHttpRequest } from '../net/git-http-client.js';
import type { OutboundProxy } from '../net/outbound-proxy.js';
import type { TlsMaterial } from '../net/outbound-tls.js';

export interface AbortableHttpClientOptions {
  /** Where requests may go: the outbound door's Git policy (src/net). */
  readonly policy: DestinationPolicy;
  /** Resolves host names for the sockets (a guardedLookup); default the policy's. */
  readonly lookup?: LookupFunction;
  /** Sends one request; default over HTTP (gitHttpRequest), an ssh:// source's runs upload-pack over SSH. */
  readonly send?: (request: GitHttpRequest) => Promise<GitHttpResponse>;
  /** The source's TLS material (a private CA, a client certificate). */
  readonly tls?: TlsMaterial;
  /** A tenant's proxy; default the policy's. */
  readonly proxy?: OutboundProxy;
}

/**
 * isomorphic-git's HTTP requests, sent through the outbound door (src/net), bound to a signal. isomorphic-git itself cannot be cancelled, so
 * every request it makes gets the signal (Node aborts the socket), and every read of a response body
 * races the signal: the Node client's body iterator never settles when its stream fails between two
 * reads, and an abandoned fetch must end, because it holds the repository's cache until it does.
 * It answers redirects as they are instead of following them: followRedirects checks every hop.
 */
export function abortableHttpClient(
  signal: AbortSignal,
  options: AbortableHttpClientOptions,
): HttpClient & { readonly close: () => Promise<void> } {
  const send =
    options.send ??
    gitHttpRequest(options.policy, options.lookup, { tls: options.tls, proxy: options.proxy });
  const opened: AsyncIterableIterator<Uint8Array>[] = [];
  return {
    request: async (request) => {
      signal.throwIfAborted();
      const response = await send({ ...request, signal });
      if (response.body !== undefined) opened.push(response.body);
      return withBodyReads(response, (body) => raceSignal(body.next(), signal));
    },
    // isomorphic-git stops reading a pack at its last packet, before the HTTP body's end: that
    // connection is neither reused nor closed, and would keep a stopped controller alive. Closing each
    // body once the fetch is over ends the unfinished ones (a finished one keeps its socket for reuse).
    close: async () => {
      await Promise.all(opened.splice(0).map((body) => body.return?.()));
    },
  };
}

/**
 * The response with every read of its body made through `read` (which reads the original body);
 * closing it still closes the original. Each wrapper of a fetch's HTTP client changes reads only.
 */
export function withBodyReads(
  response: GitHttpResponse,
  read: (body: AsyncIterableIterator<Uint8Array>) => Promise<IteratorResult<Uint8Array>>,
): GitHttpResponse {
  const body = response.body;
  if (body === undefined) return response;
  const iterator: AsyncIterableIterator<Uint8Array> = {
    next: () => read(body),
    return: async (value?: unknown) => {
      await body.return?.(value);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return { ...response, body: iterator };
}

/** Settles like `promise`, or rejects with the signal's reason as soon as it aborts. */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The loser's eventual rejection is the abandoned operation's business, reported through its own caller.
    promise.catch(noteAbandoned);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(noteAbandoned);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

function noteAbandoned(): void {}
