import type { GitHttpRequest, GitHttpResponse } from 'isomorphic-git';
import type { LookupFunction } from 'node:net';
import type { DestinationPolicy } from './destination-policy.js';
import { openOutbound } from './outbound-request.js';
import type { OutboundProxy } from './outbound-proxy.js';
import type { TlsMaterial } from './outbound-tls.js';

/**
 * isomorphic-git's HTTP request, sent through the outbound door under the Git policy: the URL is checked
 * before anything is sent and DNS's answer at connect time. Redirects are answered as they are (the
 * caller's followRedirects checks each hop and comes back here). The body is handed on as a stream; the
 * fetch limits (docs/git-sources.md) bound what is read of it.
 */
export function gitHttpRequest(
  policy: DestinationPolicy,
  /** A guardedLookup over another resolver (tests that play DNS rebinding); default the policy's. */
  lookup?: LookupFunction,
  /** The source's `ca.crt`, `tls.crt`, `tls.key` and a tenant's proxy: on every connection of this fetch. */
  { tls, proxy }: { tls?: TlsMaterial | undefined; proxy?: OutboundProxy | undefined } = {},
): (request: GitHttpRequest) => Promise<GitHttpResponse> {
  return async (request) => {
    const method = request.method ?? 'GET';
    const body = request.body === undefined ? undefined : await collect(request.body);
    const headers: Record<string, string> = { ...request.headers };
    if (body !== undefined) headers['content-length'] = String(body.length);
    const { response } = await openOutbound({
      url: new URL(request.url),
      method,
      policy,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: request.signal,
      ...(lookup === undefined ? {} : { lookup }),
      ...(tls === undefined ? {} : { transport: tls }),
      ...(proxy === undefined ? {} : { proxy }),
    });
    const flat: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const chunks = response[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>;
    const iterator: AsyncIterableIterator<Uint8Array> = {
      next: () => chunks.next(),
      return: async () => {
        // A body read to its end left its socket to the agent for reuse; only an unfinished one is cut.
        if (!response.complete) response.destroy();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return {
      url: request.url,
      method,
      statusCode: response.statusCode ?? 0,
      statusMessage: response.statusMessage ?? '',
      headers: flat,
      body: iterator,
    };
  };
}

/** A request body (isomorphic-git sends arrays of chunks, or an iterator) as one buffer, for Content-Length. */
async function collect(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}
