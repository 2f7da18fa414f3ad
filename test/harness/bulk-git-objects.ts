/**
 * Objects a hostile repository is made of, written straight into a bare repository (a test Git
 * server's `repositoryDir`) by git itself, from streams: a file of zeros of any size packs to about a
 * thousandth of it, so nothing big is ever held in the test's memory or committed as a fixture.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** Runs git on `gitDir`, feeding its stdin with `feed`; resolves with its stdout. */
async function gitWithInput(
  gitDir: string,
  args: readonly string[],
  feed: (stdin: Writable) => Promise<void>,
): Promise<string> {
  const child = spawn('git', args, {
    env: { PATH: process.env['PATH'], GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', HOME: gitDir, LC_ALL: 'C' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const closed = once(child, 'close') as Promise<[number | null]>;
  await feed(child.stdin);
  child.stdin.end();
  const [code] = await closed;
  if (code !== 0)
    throw new Error(`git ${args.join(' ')} exited with ${code}: ${Buffer.concat(stderr).toString()}`);
  return Buffer.concat(stdout).toString('utf8').trim();
}

/** Writes `chunk` and waits for the pipe to drain when it is full. */
async function write(stdin: Writable, chunk: string | Uint8Array): Promise<void> {
  if (!stdin.write(chunk)) await once(stdin, 'drain');
}

/** A blob of `bytes` zero bytes, hashed and stored by `git hash-object` from a stream; its oid. */
export function writeZeroBlob(gitDir: string, bytes: number): Promise<string> {
  return gitWithInput(gitDir, ['hash-object', '-w', '--stdin'], async (stdin) => {
    const chunk = Buffer.alloc(1 << 20);
    for (let left = bytes; left > 0; left -= chunk.length) {
      await write(stdin, left >= chunk.length ? chunk : chunk.subarray(0, left));
    }
  });
}

/** A blob of `bytes` random bytes (it packs to its own size), from a stream; its oid. */
export function writeRandomBlob(gitDir: string, bytes: number): Promise<string> {
  return gitWithInput(gitDir, ['hash-object', '-w', '--stdin'], async (stdin) => {
    for (let left = bytes; left > 0; left -= 1 << 20)
      await write(stdin, randomBytes(Math.min(left, 1 << 20)));
  });
}

/**
 * A tree of `count` small files, each of its own content (so `count` blobs), written by
 * `git fast-import` on the side ref `refs/bulk/<count>`; its oid.
 */
export async function writeManyBlobsTree(gitDir: string, count: number): Promise<string> {
  const ref = `refs/bulk/${count}`;
  await gitWithInput(gitDir, ['fast-import', '--quiet'], async (stdin) => {
    await write(stdin, `commit ${ref}\ncommitter Bulk <bulk@example.test> 1700000000 +0000\ndata 4\nbulk\n`);
    for (let index = 0; index < count; index += 1) {
      const content = `${index}\n`;
      await write(stdin, `M 100644 inline f${index}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    }
  });
  return gitWithInput(gitDir, ['rev-parse', `${ref}^{tree}`], async () => {});
}
