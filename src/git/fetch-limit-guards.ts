import type { HttpClient } from 'isomorphic-git';
import { withBodyReads } from './abortable-http-client.js';
import { describeLimit, type GitFetchLimits } from './git-fetch-limits.js';
import { GitRepositoryTooLargeError } from './git-error.js';

/**
 * An HTTP client that counts the bytes of every response body of one fetch (the ref advertisement and
 * the pack) and stops at `maxFetchBytes`: isomorphic-git gathers a pack whole in memory before it
 * looks at it, so its size is bounded while it arrives. Past the bound, `stop` is called with the
 * refusal (it aborts the fetch's signal, which every request of the fetch is bound to) and the read
 * that crossed it fails.
 */
export function byteCountingHttpClient(
  inner: HttpClient,
  url: string,
  limits: GitFetchLimits,
  stop: (refusal: GitRepositoryTooLargeError) => void,
): HttpClient {
  let received = 0;
  const count = (chunk: Uint8Array): void => {
    received += chunk.byteLength;
    if (received <= limits.maxFetchBytes) return;
    const refusal = new GitRepositoryTooLargeError(
      url,
      `the fetch received more than the ${describeLimit(limits, 'maxFetchBytes')} one fetch may bring`,
    );
    stop(refusal);
    throw refusal;
  };
  return {
    request: async (request) => {
      return withBodyReads(await inner.request(request), async (body) => {
        const result = await body.next();
        if (result.done !== true) count(result.value);
        return result;
      });
    },
  };
}
