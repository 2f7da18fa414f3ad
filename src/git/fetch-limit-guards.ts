import type { GitHttpResponse, HttpClient } from 'isomorphic-git';
import { describeLimit, type GitFetchLimits } from './git-fetch-limits.js';
import { raceSignal } from './abortable-http-client.js';
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
  large?: LargeFetchTurn,
): HttpClient {
  let received = 0;
  const count = async (chunk: Uint8Array): Promise<void> => {
    received += chunk.byteLength;
    // Past the threshold, the rest waits for this fetch's turn: one large fetch at a time.
    if (large !== undefined && received > large.thresholdBytes) await large.entered();
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
      const response = await inner.request(request);
      return response.body === undefined ? response : withCountedBody(response, response.body, count);
    },
  };
}

function withCountedBody(
  response: GitHttpResponse,
  body: AsyncIterableIterator<Uint8Array>,
  count: (chunk: Uint8Array) => Promise<void>,
): GitHttpResponse {
  const iterator: AsyncIterableIterator<Uint8Array> = {
    next: async () => {
      const result = await body.next();
      if (result.done !== true) await count(result.value);
      return result;
    },
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

/**
 * One fetch's place in the LargeFetchGate: `entered` resolves (at once after the first call) when no
 * other large fetch is running, or rejects when the fetch's signal aborts; `leave` gives the turn on,
 * whether it was taken or not, and must be called once the fetch is over.
 */
export interface LargeFetchTurn {
  readonly thresholdBytes: number;
  readonly entered: () => Promise<void>;
  readonly leave: () => void;
}

/**
 * Past this many bytes received, a fetch is large: isomorphic-git holds a pack about 5.4 times over
 * while it writes and indexes it, so each fetch near --git-max-fetch-bytes costs some 260 MiB, and
 * --concurrency fetches of different repositories at once would pass the chart's 512 MiB together.
 */
export const LARGE_FETCH_BYTES = 8 * 1024 * 1024;

/**
 * Lets one large fetch at a time go past LARGE_FETCH_BYTES; the others pause reading their answer
 * there (TCP holds the rest), each holding at most the threshold. No deadlock: the fetch whose turn it
 * is never waits for another. A paused fetch's deadline keeps running: one that runs out is retried.
 */
export function createLargeFetchGate(
  thresholdBytes = LARGE_FETCH_BYTES,
): (signal: AbortSignal) => LargeFetchTurn {
  let tail: Promise<void> = Promise.resolve();
  return (signal) => {
    let leave!: () => void;
    const left = new Promise<void>((resolve) => {
      leave = resolve;
    });
    let turn: Promise<void> | undefined;
    let queued = false;
    return {
      thresholdBytes,
      entered: () => {
        if (!queued) {
          queued = true;
          turn = tail;
          tail = tail.then(() => left);
        }
        return raceSignal(turn ?? Promise.resolve(), signal);
      },
      leave: () => leave(),
    };
  };
}
