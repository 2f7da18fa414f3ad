// The controller as its own process for the e2e tests: started as the image starts it (bin/applyset.js
// running dist/, with the Dockerfile's node flags and malloc setting), its JSON log lines collected, its
// metrics port found from the "controller started" line, and killed in afterAll when a test did not
// stop it. The integration run's global setup rebuilds dist/ whenever the sources changed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageEnv, imageNodeFlags } from '../harness/image-runtime.js';
import { e2eRunsShippedBuild } from '../harness/shipped-build.js';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import { DEFAULT_DEPLOYER, provisionDeployer } from './default-deployer.js';
import { waitFor } from './wait-for.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sourceEntry = path.join(repoRoot, 'test/e2e/controller-entry.ts');

export interface ControllerProcess {
  readonly child: ChildProcess;
  /** Every JSON log line so far. */
  readonly logs: Record<string, unknown>[];
  readonly port: number;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ControllerProcess>();

/** Starts `applyset controller` as its own process and waits until it serves its probes. */
export async function startController(options: {
  readonly namespace?: string;
  readonly kubeconfig?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /**
   * A test-only entry point, run from the sources through tsx (the fault tests' paused controller,
   * whose hook the shipped build does not have), instead of bin/applyset.js.
   */
  readonly entry?: string;
  /**
   * false: do not create the default account in `namespace` (a suite that makes its own, with the
   * rights it means to test). By default the controller runs with its defaults, which apply an ApplySet
   * as applyset-deployer of its namespace: that account is made there, bound to `admin`.
   */
  readonly provisionDeployer?: boolean;
  /**
   * false: leave loopback refused, as the controller's defaults do (a suite about that refusal). By
   * default the harness's Git servers, on loopback, are allowed with `--allowed-source-hosts 127.0.0.1`.
   */
  readonly allowLoopbackGit?: boolean;
  /** false: leave loopback receivers refused (`--internal-notification-hosts`), as the defaults do. */
  readonly allowLoopbackNotifications?: boolean;
}): Promise<ControllerProcess> {
  const given = options.args ?? [];
  const account = deployerAccount(given);
  if (options.namespace !== undefined && account !== undefined && options.provisionDeployer !== false) {
    await provisionDeployer(options.namespace, account);
  }
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'applyset-e2e-cache-'));
  const args = [
    ...entryArgs(options.entry),
    'controller',
    '--kubeconfig',
    options.kubeconfig ?? adminKubeconfigPath(),
    '--metrics-addr',
    '127.0.0.1:0',
    '--git-cache-dir',
    cacheDir,
    ...(options.namespace === undefined ? [] : ['--namespace', options.namespace]),
    // The harness's Git servers listen on loopback, which the controller refuses unless allowed.
    ...(options.allowLoopbackGit === false || given.some((arg) => arg.startsWith('--allowed-source-hosts'))
      ? []
      : ['--allowed-source-hosts', '127.0.0.1']),
    // Its notification receivers listen on loopback too, which a Notification may not reach unless named.
    ...(options.allowLoopbackNotifications === false ||
    given.some((arg) => arg.startsWith('--internal-notification-hosts'))
      ? []
      : ['--internal-notification-hosts', '127.0.0.1']),
    ...given,
  ];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      LOG_LEVEL: 'debug',
      ...(options.entry === undefined && e2eRunsShippedBuild() ? imageEnv() : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // The Git cache goes with the process, so a run leaves nothing in the temp dir.
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))).then(
    async (code) => {
      await rm(cacheDir, { recursive: true, force: true });
      return code;
    },
  );
  let exitedYet = false;
  void exited.then(() => {
    exitedYet = true;
  });
  // An exit ends the wait at once (a broken entry point or flag fails each test in a moment, not at
  // the deadline), with what the process said on stderr.
  const lastWords = () =>
    [stderr, ...logs.slice(-20).map((line) => JSON.stringify(line))].filter(Boolean).join('\n');
  let started: number | 'exited';
  try {
    started = await waitFor(
      'the controller to start',
      async () => {
        if (exitedYet) return 'exited' as const;
        const line = logs.find((entry) => entry['msg'] === 'controller started');
        return typeof line?.['port'] === 'number' ? line['port'] : undefined;
      },
      60_000,
    );
  } catch (error) {
    // A controller that never started is not left running (nor its Git cache left behind).
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${(error as Error).message}; what it said last:\n${lastWords()}`);
  }
  if (started === 'exited') throw new Error(`the controller exited before it started: ${lastWords()}`);
  const port = started;
  const process_: ControllerProcess = {
    child,
    logs,
    port,
    exited,
    async stop(signal = 'SIGTERM') {
      if (!exitedYet) child.kill(signal);
      const code = await exited;
      running.delete(process_);
      return code;
    },
  };
  running.add(process_);
  return process_;
}

/** How node starts the controller: the image's way, or a test entry (or the sources, when asked) through tsx. */
function entryArgs(testEntry: string | undefined): string[] {
  if (testEntry !== undefined) return ['--import', 'tsx', testEntry];
  if (e2eRunsShippedBuild()) return [...imageNodeFlags(), path.join(repoRoot, 'bin/applyset.js')];
  return ['--import', 'tsx', sourceEntry];
}

/** The account the controller will apply ApplySets as by default: none under --apply-as-controller. */
function deployerAccount(args: readonly string[]): string | undefined {
  if (args.includes('--apply-as-controller')) return undefined;
  const at = args.indexOf('--default-service-account');
  return at >= 0 ? args[at + 1] : DEFAULT_DEPLOYER;
}

/** Kills every controller this worker started and did not stop (for afterAll). */
export async function stopAllControllers(): Promise<void> {
  await Promise.all([...running].map((controller) => controller.stop('SIGKILL')));
}

export async function httpGet(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${urlPath}`);
  return { status: response.status, body: await response.text() };
}

/** How many reconciles of `namespace/name` the controller logged with message `msg`. */
export function logCount(controller: ControllerProcess, key: string, msg: string): number {
  return controller.logs.filter((line) => line['applyset'] === key && line['msg'] === msg).length;
}
