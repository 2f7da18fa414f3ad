import type { HttpClient } from 'isomorphic-git';
import { withBodyReads } from './abortable-http-client.js';
import { describeLimit, type GitFetchLimits } from './git-fetch-limits.js';
import { GitRepositoryTooLargeError } from './git-error.js';
import { gitFs } from './git-fs.js';
import { packLimitRefusal } from './pack-limit-refusal.js';

/**
 * The file system of one fetch: gitFs, except that a pack isomorphic-git is about to write is checked
 * first (packLimitRefusal). isomorphic-git writes the received pack and only then indexes it, inflating
 * every object whole; a refusal here throws out of `git.fetch` before either, and nothing is kept.
 */
export function packCheckingFs(url: string, limits: GitFetchLimits): typeof gitFs {
  // isomorphic-git retries a failed write once (after creating the directory): one scan is enough.
  const refusals = new WeakMap<object, string | undefined>();
  const check = (data: unknown): void => {
    if (!(data instanceof Uint8Array)) return;
    if (!refusals.has(data)) refusals.set(data, packLimitRefusal(data, limits));
    const refusal = refusals.get(data);
    if (refusal !== undefined) throw new GitRepositoryTooLargeError(url, refusal);
  };
  return {
    ...gitFs,
    writeFile: async (...args: Parameters<typeof gitFs.writeFile>) => {
      const [file, data] = args;
      if (typeof file === 'string' && file.endsWith('.pack')) check(data);
      return gitFs.writeFile(...args);
    },
  };
}

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
