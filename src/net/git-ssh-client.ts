import type { GitHttpRequest, GitHttpResponse } from 'isomorphic-git';
import type { LookupFunction } from 'node:net';
import type { DestinationPolicy } from './destination-policy.js';
import { SshCommandError } from './ssh-errors.js';
import { execOverSsh, type SshAccess, type SshExec } from './ssh-session.js';

/** Where upload-pack runs: the ssh account, the server, and the repository's path there. */
export interface SshGitTarget {
  readonly username: string;
  readonly host: string;
  readonly port: number;
  readonly path: string;
}

/** A ref advertisement larger than this is refused (a repository with a million refs is not a source). */
const MAX_ADVERTISEMENT_BYTES = 64 * 1024 * 1024;
const FLUSH = Buffer.from('0000');

/**
 * isomorphic-git's HTTP request, answered over SSH: isomorphic-git speaks Git's smart HTTP, and this runs
 * `git-upload-pack '<path>'` on the server for each request, as git's own ssh transport does. The ref
 * advertisement (`GET …/info/refs?service=git-upload-pack`) is upload-pack's greeting with smart HTTP's
 * `# service=` header before it; an upload-pack request (`POST …/git-upload-pack`) runs a new session,
 * skips its greeting, writes the request and answers with what upload-pack writes back, as a stream the
 * fetch limits read. The URL isomorphic-git is given only tells the two apart: the target is fixed here.
 */
export function gitSshRequest(
  target: SshGitTarget,
  access: SshAccess,
  policy: DestinationPolicy,
  lookup?: LookupFunction,
): (request: GitHttpRequest) => Promise<GitHttpResponse> {
  const open = (signal: AbortSignal) =>
    execOverSsh({
      ...target,
      command: `git-upload-pack '${target.path}'`,
      access,
      policy,
      signal,
      lookup,
    });
  return async (request) => {
    const signal = request.signal ?? new AbortController().signal;
    const pathname = new URL(request.url).pathname;
    const method = request.method ?? 'GET';
    if (method === 'GET' && pathname.endsWith('/info/refs')) {
      const session = await open(signal);
      const reader = pktReader(session);
      try {
        const advertisement = await reader.untilFlush();
        // Wanting nothing, upload-pack ends at once.
        session.stdin.end(FLUSH);
        const header = Buffer.from('001e# service=git-upload-pack\n0000');
        return answer(request, 'advertisement', single(Buffer.concat([header, advertisement])));
      } finally {
        session.close();
      }
    }
    if (method === 'POST' && pathname.endsWith('/git-upload-pack')) {
      const body = request.body === undefined ? [] : request.body;
      const session = await open(signal);
      const reader = pktReader(session);
      try {
        await reader.untilFlush();
        for await (const chunk of body) session.stdin.write(chunk);
        session.stdin.end();
      } catch (error) {
        session.close();
        throw error;
      }
      return answer(request, 'result', reader.rest());
    }
    return {
      ...answer(request, 'result', single(Buffer.alloc(0))),
      statusCode: 404,
      statusMessage: 'Not Found',
    };
  };
}

function answer(
  request: GitHttpRequest,
  kind: 'advertisement' | 'result',
  body: AsyncIterableIterator<Uint8Array>,
): GitHttpResponse {
  return {
    url: request.url,
    method: request.method ?? 'GET',
    statusCode: 200,
    statusMessage: 'OK',
    headers: { 'content-type': `application/x-git-upload-pack-${kind}` },
    body,
  };
}

async function* single(buffer: Buffer): AsyncIterableIterator<Uint8Array> {
  yield buffer;
}

interface PktReader {
  /** The pkt-lines up to and with the first flush packet; SshCommandError when the command ends first. */
  untilFlush(): Promise<Buffer>;
  /** What follows, as it comes; closing it ends the session. */
  rest(): AsyncIterableIterator<Uint8Array>;
}

function pktReader(session: SshExec): PktReader {
  const chunks = session.stdout[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let buffered = Buffer.alloc(0);
  return {
    untilFlush: async () => {
      let offset = 0;
      for (;;) {
        while (buffered.length >= offset + 4) {
          const length = Number.parseInt(buffered.subarray(offset, offset + 4).toString('latin1'), 16);
          if (Number.isNaN(length) || (length > 0 && length < 4)) {
            throw new SshCommandError(undefined, 'the answer is not Git pkt-lines');
          }
          if (length === 0) {
            const lines = buffered.subarray(0, offset + 4);
            buffered = buffered.subarray(offset + 4);
            return lines;
          }
          if (buffered.length < offset + length) break;
          offset += length;
        }
        if (buffered.length > MAX_ADVERTISEMENT_BYTES) {
          throw new SshCommandError(undefined, `a ref advertisement over ${MAX_ADVERTISEMENT_BYTES} bytes`);
        }
        const next = await chunks.next();
        if (next.done === true) {
          const { code, stderr } = await session.ended;
          throw new SshCommandError(code, stderr);
        }
        buffered = Buffer.concat([buffered, next.value]);
      }
    },
    rest: () => {
      let first: Buffer | undefined = buffered.length > 0 ? buffered : undefined;
      const iterator: AsyncIterableIterator<Uint8Array> = {
        next: async () => {
          if (first !== undefined) {
            const value = first;
            first = undefined;
            return { done: false, value };
          }
          const next = await chunks.next();
          if (next.done === true) {
            const { code, stderr } = await session.ended;
            if (code !== undefined && code !== 0) throw new SshCommandError(code, stderr);
          }
          return next;
        },
        return: async () => {
          session.close();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]() {
          return iterator;
        },
      };
      return iterator;
    },
  };
}
