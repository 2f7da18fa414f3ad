import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';

/** One run of a build tool (kustomize, helm) on a tenant's files. */
export interface SandboxedRun {
  /** The executable, as locateExecutable found it. */
  readonly binary: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The tool's home: its config, cache and plugin directories go under it. An empty private directory. */
  readonly home: string;
  /** More variables, on top of sandboxEnvironment's. */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Resident memory; also what Go's collector aims below (GOMEMLIMIT). */
  readonly maxMemoryBytes: number;
  /** The most output taken; a run writing more is stopped. */
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
}

/** How a run ended: it exited (with its code and output), or it was stopped at a limit. */
type SandboxedResult =
  | {
      readonly kind: 'exited';
      readonly code: number | null;
      readonly stdout: string;
      readonly stderr: string;
    }
  | { readonly kind: 'stopped'; readonly limit: 'time' | 'memory' | 'output' };

/** How a build tool's failures are said, in its own error type (KustomizeError, HelmError). */
export interface BuildToolErrors<E extends Error> {
  readonly make: (failure: 'failed' | 'internal', message: string, options?: { cause?: unknown }) => E;
  readonly isOwn: (error: unknown) => error is E;
  /** Why the run was stopped at `limit`, naming the limit and the flag that sets it. */
  readonly stopped: (limit: 'time' | 'memory' | 'output') => string;
  /** The tool's error output as a message quotes it. */
  readonly quote: (stderr: string) => string;
}

/**
 * A build tool's run (`label` in messages) as its caller takes it: the output, or the tool's own error:
 * `failed` when it was stopped at a limit or exited non-zero (quoting it), `internal` when it could not
 * be run at all. An abort is thrown as it is.
 */
export async function runBuildTool<E extends Error>(
  run: SandboxedRun,
  label: string,
  errors: BuildToolErrors<E>,
): Promise<string> {
  try {
    const result = await runSandboxedTool(run);
    if (result.kind === 'stopped') {
      throw errors.make('failed', `${label} was stopped: ${errors.stopped(result.limit)}`);
    }
    if (result.code !== 0) throw errors.make('failed', `${label} failed: ${errors.quote(result.stderr)}`);
    return result.stdout;
  } catch (error) {
    if (errors.isOwn(error) || run.signal?.aborted === true) throw error;
    throw errors.make('internal', `${label} could not run ${run.binary}: ${String(error)}`, { cause: error });
  }
}

/**
 * How often the resident memory of a run is read. Its address space is not limited instead (`ulimit
 * -v`): Go reserves about 750 MiB of it before it allocates anything, and how much more varies from run
 * to run (measured with kustomize v5.8.2: the same small build died now and then under 1.25 GiB).
 */
const MEMORY_POLL_MS = 25;
/** The most of a tool's error output kept, half from its start and half from its end. */
const MAX_STDERR_CHARS = 64 * 1024;

/**
 * Runs a Go build tool on a tenant's files without network and with nothing of the controller's
 * environment: PATH names no directory (no git, no plugin executables), HOME is the run's private
 * directory, and every HTTP proxy variable points at a closed loopback port (Go's HTTP client takes
 * them for every request). It is killed past its time limit, when its resident memory (read every
 * MEMORY_POLL_MS) passes its limit, when its output passes its limit, or when `signal` aborts (then
 * the signal's reason is thrown). How many run at once is the caller's to bound (the build scheduler).
 */
async function runSandboxedTool(run: SandboxedRun): Promise<SandboxedResult> {
  const closedProxy = 'http://127.0.0.1:1';
  const child = spawn(run.binary, [...run.args], {
    cwd: run.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: '/nonexistent',
      HOME: run.home,
      XDG_CONFIG_HOME: run.home,
      HTTP_PROXY: closedProxy,
      HTTPS_PROXY: closedProxy,
      http_proxy: closedProxy,
      https_proxy: closedProxy,
      NO_PROXY: '',
      no_proxy: '',
      // The collector aims below the limit, so a large but legitimate build collects instead of dying.
      GOMEMLIMIT: String(Math.floor(run.maxMemoryBytes * 0.75)),
      ...run.env,
    },
  });
  let stopped: 'time' | 'memory' | 'output' | 'abort' | undefined;
  const stop = (why: NonNullable<typeof stopped>) => {
    stopped ??= why;
    child.kill('SIGKILL');
  };
  const out: Buffer[] = [];
  let outBytes = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    outBytes += chunk.length;
    if (outBytes > run.maxOutputBytes) stop('output');
    else out.push(chunk);
  });
  // Both ends of the error output: a Go template error chains every include it went through, its
  // cause last.
  let stderr = '';
  let stderrCut = false;
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    if (stderr.length > MAX_STDERR_CHARS) {
      stderr = `${stderr.slice(0, MAX_STDERR_CHARS / 2)}${stderr.slice(-MAX_STDERR_CHARS / 2)}`;
      stderrCut = true;
    }
  });
  const timer = setTimeout(() => stop('time'), run.timeoutMs);
  const poll = setInterval(() => {
    void residentBytes(child.pid).then((bytes) => {
      if (bytes !== undefined && bytes > run.maxMemoryBytes) stop('memory');
    });
  }, MEMORY_POLL_MS);
  const onAbort = () => stop('abort');
  run.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolve(exitCode));
    });
    if (stopped === 'abort') throw run.signal?.reason ?? new Error('aborted');
    if (stopped !== undefined) return { kind: 'stopped', limit: stopped };
    const errors = stderrCut
      ? `${stderr.slice(0, MAX_STDERR_CHARS / 2)} … ${stderr.slice(MAX_STDERR_CHARS / 2)}`
      : stderr;
    return { kind: 'exited', code, stdout: Buffer.concat(out).toString('utf8'), stderr: errors };
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
    run.signal?.removeEventListener('abort', onAbort);
  }
}

/** The binary's path: as given when it has a slash, else found on the controller's PATH. */
export async function locateExecutable(binary: string): Promise<string | undefined> {
  const candidates = binary.includes('/')
    ? [path.resolve(binary)]
    : (process.env['PATH'] ?? '')
        .split(path.delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => path.join(dir, binary));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // The next directory of PATH.
    }
  }
  return undefined;
}

/** The resident memory of a process, from Linux's /proc; undefined elsewhere or once it is gone. */
async function residentBytes(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}
