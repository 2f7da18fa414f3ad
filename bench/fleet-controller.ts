// One controller process of the fleet bench, run as the chart's image runs it: dist/ with the image's
// node flags and environment, --leader-elect and --concurrency 4 (the chart's defaults), and with
// APPLYSET_BENCH_NODE_FLAGS added (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { imageEnv, imageNodeFlags } from '../test/harness/image-runtime.js';
import { SHARD_LABEL, shardName } from './fleet-workload.js';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '..');

export interface FleetControllerOptions {
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly cacheDir: string;
  readonly applyAsController: boolean;
  /** The shard this process reconciles (its label selector and Lease), when the fleet is sharded. */
  readonly shard?: number;
  /** Flags after the chart's (e.g. a longer Lease). */
  readonly extraArgs?: readonly string[];
  /** Objects the fleet's repository holds: --git-max-fetch-objects is raised to it when above 50,000. */
  readonly fetchObjects?: number;
}

/** A running controller: its metrics port, when it logged each ApplySet reconciled, its RSS and CPU. */
export interface FleetController {
  readonly child: ChildProcess;
  readonly port: Promise<number>;
  /** `namespace/name` → the performance.now() of each `reconciled` it logged. */
  readonly reconciles: Map<string, number[]>;
  /** The RSS sampled last and at its highest, with when that was and how many reconciles were logged then. */
  readonly rss: { peak: number; last: number; peakAt: number; reconcilesAtPeak: number };
  /**
   * The log lines at warn and above, and the informers' relists, by message: what a figure that is
   * off (a LIST too many) came from.
   */
  readonly warnings: Map<string, number>;
  /** Set once the process exited, with its code or signal. */
  exit: string | undefined;
  /** CPU time the process has used so far (user and system), in seconds. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

function controllerArgs(options: FleetControllerOptions): string[] {
  const shard =
    options.shard === undefined
      ? []
      : [
          '--watch-label-selector',
          `${SHARD_LABEL} in (${shardName(options.shard)})`,
          '--lease-name',
          `applyset-controller-${shardName(options.shard)}`,
        ];
  return [
    // What the chart's image runs: dist/ with the image's node flags, not the sources through tsx,
    // whose compiler would be part of the memory figures.
    ...imageNodeFlags(),
    ...(process.env['APPLYSET_BENCH_NODE_FLAGS']?.split(' ').filter((flag) => flag !== '') ?? []),
    join(repoRoot, 'bin/applyset.js'),
    'controller',
    '--kubeconfig',
    options.kubeconfig,
    '--metrics-addr',
    '127.0.0.1:0',
    '--namespace',
    options.namespace,
    '--git-cache-dir',
    options.cacheDir,
    '--leader-elect',
    '--concurrency',
    '4',
    ...shard,
    ...(options.applyAsController ? ['--apply-as-controller'] : []),
    ...(options.extraArgs ?? []),
    // The bench's repository holds 5 objects per ApplySet (a tree, 4 files): at 10,000 more than the
    // default bound of one fetch (50,000 objects), which an operator with such a monorepo raises so.
    '--git-max-fetch-objects',
    String(Math.max(50_000, options.fetchObjects ?? 0)),
    // A fleet created in bulk, as an operator of one would run it: new ApplySets share a fetch made in
    // the last 10 s (off by default) instead of fetching the monorepo once each.
    '--shared-fetch-max-age',
    '10s',
    // The bench's Git server is on loopback, which a source may name only when allowed.
    '--allowed-source-hosts',
    '127.0.0.1',
  ];
}

export function startFleetController(options: FleetControllerOptions): FleetController {
  const child = spawn(process.execPath, controllerArgs(options), {
    cwd: repoRoot,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], LOG_LEVEL: 'info', ...imageEnv() },
  });
  const reconciles = new Map<string, number[]>();
  let reconciled = 0;
  const warnings = new Map<string, number>();
  let resolvePort!: (port: number) => void;
  const port = new Promise<number>((resolvePromise) => (resolvePort = resolvePromise));
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const entry = parseLine(line);
      if (entry.msg === 'controller started' && typeof entry.port === 'number') resolvePort(entry.port);
      if (
        entry.msg !== undefined &&
        ((entry.level ?? 0) >= WARN_LEVEL || entry.msg.includes('listing again'))
      ) {
        const what = warningKey(entry);
        warnings.set(what, (warnings.get(what) ?? 0) + 1);
      }
      if (entry.msg === 'reconciled' && entry.applyset !== undefined) {
        reconciled += 1;
        const times = reconciles.get(entry.applyset) ?? [];
        times.push(performance.now());
        reconciles.set(entry.applyset, times);
      }
    }
  });
  child.stderr?.resume();
  const rss = { peak: 0, last: 0, peakAt: 0, reconcilesAtPeak: 0 };
  const sampler = setInterval(() => {
    void readFile(`/proc/${child.pid}/status`, 'utf8')
      .then((status) => {
        rss.last = statusKib(status, 'VmRSS') * 1024;
        if (rss.last <= rss.peak) return;
        Object.assign(rss, { peak: rss.last, peakAt: performance.now(), reconcilesAtPeak: reconciled });
      })
      .catch(() => undefined);
  }, 200);
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', (code, signal) => {
      controller.exit = String(code ?? signal);
      clearInterval(sampler);
      resolveExit();
    }),
  );
  const controller: FleetController = {
    child,
    port,
    reconciles,
    rss,
    warnings,
    exit: undefined,
    cpuSeconds: () => processCpuSeconds(child.pid ?? 0),
    async stop() {
      clearInterval(sampler);
      if (controller.exit === undefined) child.kill('SIGTERM');
      await exited;
    },
  };
  return controller;
}

/** pino's level of `warn`. */
const WARN_LEVEL = 40;

/** The controllers' warnings so far, `"message" N, ...`, or `none`; each controller's are then cleared. */
export function takeWarnings(controllers: readonly FleetController[]): string {
  const total = new Map<string, number>();
  for (const controller of controllers) {
    for (const [msg, count] of controller.warnings) total.set(msg, (total.get(msg) ?? 0) + count);
    controller.warnings.clear();
  }
  const rows = [...total].sort((a, b) => b[1] - a[1]).map(([what, count]) => `"${what}" ${count}`);
  return rows.length === 0 ? 'none' : rows.join(', ');
}

interface LogEntry {
  readonly msg?: string;
  readonly port?: number;
  readonly applyset?: string;
  readonly level?: number;
  /** The informer's name, bound to its logger (`applysets`, `notifications`, ...). */
  readonly informer?: string;
  readonly err?: { readonly type?: string; readonly status?: number };
}

function parseLine(line: string): LogEntry {
  try {
    return JSON.parse(line) as LogEntry;
  } catch {
    return {};
  }
}

/** A warning as the bench counts it: its message, which informer said it, and the error's type and status. */
function warningKey(entry: LogEntry): string {
  const where = entry.informer === undefined ? '' : ` [${entry.informer}]`;
  const error =
    entry.err === undefined
      ? ''
      : ` (${entry.err.type ?? 'error'}${entry.err.status === undefined ? '' : ` ${entry.err.status}`})`;
  return `${entry.msg ?? ''}${where}${error}`;
}

/** A `Field:   1234 kB` line of /proc/PID/status, in KiB. */
export function statusKib(status: string, field: string): number {
  const line = status.split('\n').find((candidate) => candidate.startsWith(`${field}:`));
  return Number(
    line
      ?.slice(field.length + 1)
      .trim()
      .split(' ')[0] ?? NaN,
  );
}

/** Fields 14 and 15 of /proc/PID/stat (utime, stime), in clock ticks of 1/CLK_TCK s. */
export async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  clockTicks ??= execFileAsync('getconf', ['CLK_TCK']).then(({ stdout }) => Number(stdout.trim()));
  return ticks / (await clockTicks);
}

/** CLK_TCK, asked of getconf once. */
let clockTicks: Promise<number> | undefined;

/** Whether the controller holds its Lease, from its own /metrics (applyset_leader). */
export async function isLeader(controller: FleetController): Promise<boolean> {
  const text = await (await fetch(`http://127.0.0.1:${await controller.port}/metrics`)).text();
  return text.split('\n').some((line) => line.startsWith('applyset_leader') && line.endsWith(' 1'));
}

/** Every key has a `reconciled` logged at or after `since` by one of the controllers. */
export function reconciledSince(
  controllers: readonly FleetController[],
  keys: readonly string[],
  since: number,
): boolean {
  return keys.every((key) =>
    controllers.some((controller) => (controller.reconciles.get(key)?.at(-1) ?? -1) >= since),
  );
}

/** Every key was logged `reconciled` at least `times` times by the controller. */
export function reconciledTimes(controller: FleetController, keys: readonly string[], times: number) {
  return keys.every((key) => (controller.reconciles.get(key)?.length ?? 0) >= times);
}

/** The `reconciled` lines the controllers logged in [from, to). */
export function reconcilesBetween(controllers: readonly FleetController[], from: number, to: number): number {
  let count = 0;
  for (const controller of controllers) {
    for (const times of controller.reconciles.values()) {
      count += times.filter((time) => time >= from && time < to).length;
    }
  }
  return count;
}

/** The controller's own view of its memory, from its /metrics (prom-client's default metrics). */
/** The samples of the controller's /metrics named in `names` (NaN for one it does not serve). */
export async function metricValues<Name extends string>(
  controller: FleetController,
  names: readonly Name[],
): Promise<Record<Name, number>> {
  const text = await (await fetch(`http://127.0.0.1:${await controller.port}/metrics`)).text();
  const lines = text.split('\n');
  const value = (name: string) => {
    const line = lines.find((candidate) => candidate.startsWith(`${name} `));
    return Number(line?.slice(name.length + 1) ?? NaN);
  };
  return Object.fromEntries(names.map((name) => [name, value(name)])) as Record<Name, number>;
}

export async function memoryBreakdown(controller: FleetController): Promise<string> {
  const values = await metricValues(controller, [
    'nodejs_heap_size_used_bytes',
    'nodejs_heap_size_total_bytes',
    'nodejs_external_memory_bytes',
  ]);
  return (
    `heap used ${mib(values.nodejs_heap_size_used_bytes)} of ${mib(values.nodejs_heap_size_total_bytes)}, ` +
    `external ${mib(values.nodejs_external_memory_bytes)}`
  );
}

/** RSS split as the kernel counts it: anonymous memory, and pages of mapped files (node's binary). */
export async function rssSplit(controller: FleetController): Promise<string> {
  const status = await readFile(`/proc/${controller.child.pid}/status`, 'utf8');
  return (
    `anonymous ${mib(statusKib(status, 'RssAnon') * 1024)}, ` +
    `file-backed ${mib(statusKib(status, 'RssFile') * 1024)}`
  );
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
