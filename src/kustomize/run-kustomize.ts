import path from 'node:path';
import type { ScheduleBuild } from '../builds/build-scheduler.js';
import { locateExecutable, runBuildTool } from '../builds/run-sandboxed-tool.js';
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
  /**
   * The helm that renders a chart (spec.helm, src/helm/): `--helm-binary`, else APPLYSET_HELM_BINARY;
   * undefined: `helm` on PATH. A chart is rendered under the limits and scheduler of a kustomize build.
   */
  readonly helmBinary?: string | undefined;
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

/** The most of kustomize's error output a message quotes. */
const MAX_ERROR_CHARS = 2000;

/**
 * Runs `kustomize build --load-restrictor LoadRestrictionsRootOnly DIR` and returns what it printed.
 * Never with --enable-alpha-plugins, --enable-exec or --enable-helm. It runs sandboxed
 * (runSandboxedTool: no network, no PATH, a private home), killed past its time limit, its memory
 * limit, its output limit, or when `signal` aborts. How many builds run at once is the caller's to
 * bound (the controller's build scheduler, src/builds/build-scheduler.ts). Errors are KustomizeError:
 * `failed` quoting kustomize's own message, `internal` when it cannot be started.
 */
export async function runKustomize(run: KustomizeRun): Promise<string> {
  const { binary, subcommand } = await locateKustomize(run.options.binary);
  return runBuildTool(
    {
      binary,
      args: [subcommand, '--load-restrictor', 'LoadRestrictionsRootOnly', run.dir],
      cwd: run.dir,
      home: run.home,
      env: { KUSTOMIZE_PLUGIN_HOME: path.join(run.home, 'no-plugins') },
      timeoutMs: run.options.timeoutMs,
      maxMemoryBytes: run.options.maxMemoryBytes,
      maxOutputBytes: run.maxOutputBytes,
      ...(run.signal === undefined ? {} : { signal: run.signal }),
    },
    run.label,
    {
      make: (failure, message, options) => new KustomizeError(failure, message, options),
      isOwn: (error): error is KustomizeError => error instanceof KustomizeError,
      stopped: (why) => limitDetail(run, why),
      quote: (stderr) => cleanError(stderr, run.hide),
    },
  );
}

function limitDetail(run: KustomizeRun, why: 'time' | 'memory' | 'output'): string {
  const { timeoutMs, maxMemoryBytes } = run.options;
  return {
    time: `it ran past its time limit of ${timeoutMs / 1000} s (--kustomize-timeout)`,
    memory: `it used more than its memory limit of ${formatBytes(maxMemoryBytes)} (--kustomize-max-memory)`,
    output: `it printed more than ${formatBytes(run.maxOutputBytes)}, the limit of a set's manifests`,
  }[why];
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
