import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ScheduleBuild } from '../builds/build-scheduler.js';
import { formatBytes } from '../manifests/manifest-limits.js';
import { KustomizeError } from './kustomize-error.js';

/** How the controller (or the CLI) runs kustomize: `--kustomize-binary`, `--kustomize-timeout`, `--kustomize-max-memory`. */
export interface KustomizeOptions {
  /**
   * A path, or a name looked up on PATH; a `kubectl` runs as `kubectl kustomize`. Undefined: `kustomize`
   * on PATH, else `kubectl kustomize` (what `kubectl apply -k` builds with).
   */
  readonly binary?: string | undefined;
  /** Wall-clock time of one build. */
  readonly timeoutMs: number;
  /** Resident memory of one build. */
  readonly maxMemoryBytes: number;
  /**
   * When a build may start and how long it may run (the controller's build scheduler, fair among
   * namespaces); undefined: at once, for `timeoutMs` (the command line, one build at a time).
   */
  readonly schedule?: ScheduleBuild;
  /** A memory-backed directory for builds that read decrypted files (memory-scratch.ts's default if not given). */
  readonly decryptionScratchDir?: string;
}

export const DEFAULT_KUSTOMIZE_OPTIONS: KustomizeOptions = {
  timeoutMs: 60_000,
  maxMemoryBytes: 256 * 1024 * 1024,
};

export interface KustomizeRun {
  /** The kustomization directory to build. */
  readonly dir: string;
  /** How messages name the build: `kustomize build apps/prod`. */
  readonly label: string;
  /** A directory of the caller's to hide from kustomize's messages (the private copy of a repository). */
  readonly hide?: string;
  /** kustomize's home (its config and plugin directories): an empty private directory. */
  readonly home: string;
  /** The most output taken; a build writing more is stopped. */
  readonly maxOutputBytes: number;
  readonly options: KustomizeOptions;
  readonly signal?: AbortSignal;
}

/**
 * How often the resident memory of a build is read. Its address space is not limited instead (`ulimit
 * -v`): Go reserves about 750 MiB of it before it allocates anything, and how much more varies from run
 * to run (measured with kustomize v5.8.2: the same small build died now and then under 1.25 GiB).
 */
const MEMORY_POLL_MS = 25;
/** The most of kustomize's error output a message quotes. */
const MAX_ERROR_CHARS = 2000;

/**
 * Runs `kustomize build --load-restrictor LoadRestrictionsRootOnly DIR` and returns what it printed.
 * Never with --enable-alpha-plugins, --enable-exec or --enable-helm. It runs without network: PATH names
 * no directory (no git for remote bases) and every HTTP proxy variable points at a closed loopback port
 * (Go's HTTP client takes them for every request). It is killed past its time limit, when its resident
 * memory (read every MEMORY_POLL_MS) passes its limit, or when `signal` aborts; GOMEMLIMIT makes Go's
 * collector work harder before that. How many builds run at once is the caller's to bound (the
 * controller's build scheduler, src/builds/build-scheduler.ts). Errors are KustomizeError: `failed`
 * quoting kustomize's own message, `internal` when it cannot be started.
 */
export async function runKustomize(run: KustomizeRun): Promise<string> {
  const { binary, subcommand } = await locateKustomize(run.options.binary);
  const { timeoutMs, maxMemoryBytes } = run.options;
  const closedProxy = 'http://127.0.0.1:1';
  const child = spawn(binary, [subcommand, '--load-restrictor', 'LoadRestrictionsRootOnly', run.dir], {
    cwd: run.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: '/nonexistent',
      HOME: run.home,
      XDG_CONFIG_HOME: run.home,
      KUSTOMIZE_PLUGIN_HOME: path.join(run.home, 'no-plugins'),
      HTTP_PROXY: closedProxy,
      HTTPS_PROXY: closedProxy,
      http_proxy: closedProxy,
      https_proxy: closedProxy,
      // The collector aims below the limit, so a large but legitimate build collects instead of dying.
      GOMEMLIMIT: String(Math.floor(maxMemoryBytes * 0.75)),
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
  let errText = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (errText.length < 64 * 1024) errText += chunk.toString('utf8');
  });
  const timer = setTimeout(() => stop('time'), timeoutMs);
  const poll = setInterval(() => {
    void residentBytes(child.pid).then((bytes) => {
      if (bytes !== undefined && bytes > maxMemoryBytes) stop('memory');
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
    if (stopped !== undefined) throw limitError(run, stopped);
    if (code !== 0) {
      throw new KustomizeError('failed', `${run.label} failed: ${cleanError(errText, run.hide)}`);
    }
    return Buffer.concat(out).toString('utf8');
  } catch (error) {
    if (error instanceof KustomizeError || run.signal?.aborted === true) throw error;
    throw new KustomizeError('internal', `${run.label} could not run ${binary}: ${String(error)}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
    run.signal?.removeEventListener('abort', onAbort);
  }
}

function limitError(run: KustomizeRun, why: 'time' | 'memory' | 'output'): KustomizeError {
  const { timeoutMs, maxMemoryBytes } = run.options;
  const detail = {
    time: `it ran past its time limit of ${timeoutMs / 1000} s (--kustomize-timeout)`,
    memory: `it used more than its memory limit of ${formatBytes(maxMemoryBytes)} (--kustomize-max-memory)`,
    output: `it printed more than ${formatBytes(run.maxOutputBytes)}, the limit of a set's manifests`,
  }[why];
  return new KustomizeError('failed', `${run.label} was stopped: ${detail}`);
}

/** kustomize's message, without its `Error: ` prefix nor the private directory it ran in. */
function cleanError(stderr: string, hide: string | undefined): string {
  let text = stderr.trim().replace(/^Error: /, '');
  if (hide !== undefined) text = text.split(`${hide}/`).join('').split(hide).join('.');
  text = text.split('\n').join('; ');
  if (text === '') return 'it exited without a message';
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

/** Where the binary may be named: the words of the messages that say it could not be found. */
const BINARY_SETTINGS = '--kustomize-binary or APPLYSET_KUSTOMIZE_BINARY';

/**
 * The program to run and its build subcommand: the binary named, else `kustomize` on the controller's
 * PATH, else `kubectl kustomize` (kubectl embeds kustomize, and takes the same build flags).
 */
async function locateKustomize(binary: string | undefined): Promise<{ binary: string; subcommand: string }> {
  const subcommandOf = (found: string) => (path.basename(found) === 'kubectl' ? 'kustomize' : 'build');
  if (binary !== undefined) {
    const found = await locateExecutable(binary);
    if (found !== undefined) return { binary: found, subcommand: subcommandOf(found) };
    throw new KustomizeError(
      'internal',
      `kustomize is not installed: no executable ${JSON.stringify(binary)}${binary.includes('/') ? '' : ' on PATH'} (${BINARY_SETTINGS})`,
    );
  }
  for (const name of ['kustomize', 'kubectl']) {
    const found = await locateExecutable(name);
    if (found !== undefined) return { binary: found, subcommand: subcommandOf(found) };
  }
  throw new KustomizeError(
    'internal',
    `kustomize is not installed: neither "kustomize" nor "kubectl" (for kubectl kustomize) is on PATH; install one, or name the binary with ${BINARY_SETTINGS}`,
  );
}

/** The binary's path: as given when it has a slash, else found on the controller's PATH. */
async function locateExecutable(binary: string): Promise<string | undefined> {
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
