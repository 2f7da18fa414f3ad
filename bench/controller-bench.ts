// Controller benchmark (issue #14, fleet scale): N ApplySets × 4 ConfigMaps from one repository URL,
// one controller process, on a local control plane of its own (so the API server's counters hold our
// requests only). Run: npm run bench -- --controller 100,1000
// The controller runs from dist/ (built first), with the node flags in APPLYSET_BENCH_NODE_FLAGS if set,
// e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where its time goes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { DEFAULT_DEPLOYER_ACCOUNT } from '../src/api/applyset-account.js';
import { startControlPlane } from '../test/harness/control-plane.js';
import { startGitServer, type GitTestServer } from '../test/harness/git-server.js';
import { imageEnv, imageNodeFlags } from '../test/harness/image-runtime.js';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '..');

/** A running controller: its pid, its metrics port, and how often it logged each ApplySet reconciled. */
interface BenchController {
  readonly child: ChildProcess;
  readonly port: Promise<number>;
  readonly reconciled: Map<string, number>;
  readonly rss: { peak: number; last: number };
  /** CPU time the process has used so far (user and system), in seconds. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

/** apiserver_request_total summed by `VERB resource`, the controller-manager's leases left out. */
type RequestCounts = Map<string, number>;

async function kubectl(kubeconfig: string, args: readonly string[], input?: string): Promise<string> {
  const child = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    maxBuffer: 256 * 1024 * 1024,
  });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

async function serverRequests(kubeconfig: string): Promise<RequestCounts> {
  const counts: RequestCounts = new Map();
  for (const line of (await kubectl(kubeconfig, ['get', '--raw', '/metrics'])).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    const resource = /[{,]resource="([^"]*)"/.exec(line)?.[1] ?? '';
    // Not the controller's: the control plane's own leases and endpoints, requests that name no
    // resource (these /metrics reads), and the bench's creates of the ApplySets.
    if (['leases', 'endpoints', 'endpointslices', ''].includes(resource)) continue;
    const key = `${verb} ${resource}`;
    if (key === 'POST applysets') continue;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

/** after − before, per `VERB resource`, divided by `per`; rows under 0.005 left out. */
function perReconcile(before: RequestCounts, after: RequestCounts, per: number): string {
  const rows: string[] = [];
  for (const [key, value] of [...after.entries()].sort()) {
    const delta = value - (before.get(key) ?? 0);
    // Under one request per hundred reconciles: the control plane's own (its watches restarting), not ours.
    if (delta / per < 0.005) continue;
    rows.push(`${key} ${(delta / per).toFixed(2)}`);
  }
  return rows.join(', ');
}

function startBenchController(kubeconfig: string, namespace: string, cacheDir: string): BenchController {
  const child = spawn(
    process.execPath,
    [
      // What the chart's image runs: dist/ with the image's node flags, not the sources through tsx,
      // whose compiler would be part of the memory figures.
      ...imageNodeFlags(),
      ...(process.env['APPLYSET_BENCH_NODE_FLAGS']?.split(' ').filter((flag) => flag !== '') ?? []),
      join(repoRoot, 'bin/applyset.js'),
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--metrics-addr',
      '127.0.0.1:0',
      '--namespace',
      namespace,
      '--git-cache-dir',
      cacheDir,
      // The bench's Git server is on loopback, which a source may name only when allowed.
      '--allowed-source-hosts',
      '127.0.0.1',
    ],
    {
      cwd: repoRoot,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], LOG_LEVEL: 'info', ...imageEnv() },
    },
  );
  const reconciled = new Map<string, number>();
  let resolvePort!: (port: number) => void;
  const port = new Promise<number>((resolvePromise) => (resolvePort = resolvePromise));
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg?: string; port?: number; applyset?: string };
      if (entry.msg === 'controller started' && typeof entry.port === 'number') resolvePort(entry.port);
      if (entry.msg === 'reconciled' && entry.applyset !== undefined) {
        reconciled.set(entry.applyset, (reconciled.get(entry.applyset) ?? 0) + 1);
      }
    }
  });
  child.stderr?.resume();
  const rss = { peak: 0, last: 0 };
  const sampler = setInterval(() => {
    void readFile(`/proc/${child.pid}/status`, 'utf8')
      .then((status) => {
        const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
        rss.last = kib * 1024;
        rss.peak = Math.max(rss.peak, rss.last);
      })
      .catch(() => undefined);
  }, 200);
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  return {
    child,
    port,
    reconciled,
    rss,
    cpuSeconds: () => processCpuSeconds(child.pid ?? 0),
    async stop() {
      clearInterval(sampler);
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Fields 14 and 15 of /proc/PID/stat (utime, stime), in clock ticks of 1/CLK_TCK s. */
async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  clockTicks ??= execFileAsync('getconf', ['CLK_TCK']).then(({ stdout }) => Number(stdout.trim()));
  return ticks / (await clockTicks);
}

/** CLK_TCK, asked of getconf once. */
let clockTicks: Promise<number> | undefined;

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
  }
}

const fetchesOf = (git: GitTestServer) =>
  git.requests.filter((request) => request.method === 'GET' && request.url.includes('/info/refs')).length;

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

function applySetsYaml(
  namespace: string,
  url: string,
  n: number,
  intervalSeconds: number,
  tenants: boolean,
): string {
  return Array.from(
    { length: n },
    (_, i) =>
      `apiVersion: applyset.dev/v1alpha1\nkind: ApplySet\nmetadata: { name: fleet-${i}, namespace: ${namespace} }\n` +
      `spec:\n  source: { url: "${url}", ref: { branch: main }, path: set-${i} }\n  interval: ${intervalSeconds}s\n  prune: true\n` +
      (tenants ? `  serviceAccountName: tenant-${i}\n` : ''),
  ).join('---\n');
}

/**
 * `--tenants`: a ServiceAccount per ApplySet, each bound to one Role that may write ConfigMaps (the
 * controller writes the inventory as itself), so the controller acts as n identities (what one
 * identity costs it). Without it, the one account the controller applies every ApplySet as by default,
 * applyset-deployer, bound to that Role.
 */
function tenantsYaml(namespace: string, n: number, tenants: boolean): string {
  const role =
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: { name: tenant, namespace: ${namespace} }\n` +
    `rules:\n  - { apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete] }\n`;
  const accounts = Array.from(tenants ? { length: n } : [DEFAULT_DEPLOYER_ACCOUNT], (name, i) =>
    accountYaml(namespace, typeof name === 'string' ? name : `tenant-${i}`),
  );
  return [role, ...accounts].join('---\n');
}

function accountYaml(namespace: string, name: string): string {
  return (
    `apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: ${name}, namespace: ${namespace} }\n---\n` +
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: { name: ${name}, namespace: ${namespace} }\n` +
    `roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: tenant }\n` +
    `subjects: [{ kind: ServiceAccount, name: ${name}, namespace: ${namespace} }]\n`
  );
}

/** Every ApplySet logged `reconciled` at least `times` times. */
const allReconciled = (controller: BenchController, keys: readonly string[], times: number) => () =>
  keys.every((key) => (controller.reconciled.get(key) ?? 0) >= times);

/** RSS split as the kernel counts it: anonymous memory, and pages of mapped files (node's binary). */
async function rssSplit(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return `anonymous ${mib(kib('RssAnon') * 1024)}, file-backed ${mib(kib('RssFile') * 1024)}`;
}

/** The controller's own view of its memory at idle, from its /metrics (prom-client's default metrics). */
async function memoryBreakdown(port: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return (
    `heap used ${mib(value('nodejs_heap_size_used_bytes'))} of ${mib(value('nodejs_heap_size_total_bytes'))}, ` +
    `external ${mib(value('nodejs_external_memory_bytes'))}`
  );
}

/** One fleet of `n`: create, wait for all Ready, then the second reconcile and two at rest. */
async function benchFleet(kubeconfig: string, n: number, work: string, tenants: boolean): Promise<string[]> {
  const namespace = `fleet-${n}`;
  const intervalSeconds = Math.max(20, Math.ceil(n * 0.06));
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i += 1) {
    for (const c of ['a', 'b', 'c', 'd']) {
      files[`set-${i}/${c}.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s${i}-${c}\ndata:\n  v: "1"\n`;
    }
  }
  const git = await startGitServer({ files });
  await kubectl(kubeconfig, ['create', 'namespace', namespace]);
  await kubectl(kubeconfig, ['create', '-f', '-'], tenantsYaml(namespace, n, tenants));
  const controller = startBenchController(kubeconfig, namespace, await mkdtemp(join(work, 'git-cache-')));
  const keys = Array.from({ length: n }, (_, i) => `${namespace}/fleet-${i}`);
  const lines: string[] = [];
  try {
    await controller.port;
    const before = await serverRequests(kubeconfig);
    const cpuBefore = await controller.cpuSeconds();
    const started = performance.now();
    await kubectl(
      kubeconfig,
      ['create', '-f', '-'],
      applySetsYaml(namespace, git.url, n, intervalSeconds, tenants),
    );
    await waitUntil('every ApplySet Ready', allReconciled(controller, keys, 1), 30 * 60_000);
    const readyMs = performance.now() - started;
    const readyCpu = (await controller.cpuSeconds()) - cpuBefore;
    const afterFirst = await serverRequests(kubeconfig);
    const firstFetches = fetchesOf(git);
    lines.push(
      `N=${n}${tenants ? ` (${n} ServiceAccounts)` : ''}: all Ready in ${(readyMs / 1000).toFixed(1)} s ` +
        `(controller CPU ${readyCpu.toFixed(1)} s); peak RSS ${mib(controller.rss.peak)}; ` +
        `Git fetches ${firstFetches}; load ${load()}`,
      `  first reconcile, requests per ApplySet: ${perReconcile(before, afterFirst, n)}`,
    );
    await waitUntil('a second reconcile each', allReconciled(controller, keys, 2), 30 * 60_000);
    const afterSecond = await serverRequests(kubeconfig);
    lines.push(`  second reconcile, per ApplySet: ${perReconcile(afterFirst, afterSecond, n)}`);
    const restStarted = performance.now();
    const restCpuStarted = await controller.cpuSeconds();
    const restFetches = fetchesOf(git);
    await waitUntil('two more reconciles each', allReconciled(controller, keys, 4), 30 * 60_000);
    const restSeconds = (performance.now() - restStarted) / 1000;
    const restCpuMs = (((await controller.cpuSeconds()) - restCpuStarted) * 1000) / (2 * n);
    const afterRest = await serverRequests(kubeconfig);
    lines.push(
      `  at rest (2 reconciles each, ${restSeconds.toFixed(0)} s, interval ${intervalSeconds} s), per reconcile: ` +
        `${perReconcile(afterSecond, afterRest, 2 * n)}; controller CPU ${restCpuMs.toFixed(1)} ms; ` +
        `Git fetches ${fetchesOf(git) - restFetches}; ` +
        `idle RSS ${mib(controller.rss.last)} (${await rssSplit(controller.child.pid ?? 0)}; ` +
        `peak over the run ${mib(controller.rss.peak)}; ` +
        `${await memoryBreakdown(await controller.port)}); load ${load()}`,
    );
  } finally {
    await controller.stop();
    await git.close();
  }
  return lines;
}

export async function runControllerBench(sizes: readonly number[], tenants = false): Promise<void> {
  process.stderr.write('building dist/ and starting a local control plane...\n');
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  await execFileAsync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot });
  const controlPlane = await startControlPlane({ ownerPid: process.pid });
  const work = await mkdtemp(join(tmpdir(), 'applyset-controller-bench-'));
  try {
    const kubeconfig = controlPlane.kubeconfigPath;
    await kubectl(kubeconfig, ['apply', '-f', join(repoRoot, 'crds')]);
    await kubectl(kubeconfig, ['wait', '--for', 'condition=Established', 'crd/applysets.applyset.dev']);
    process.stdout.write(`load at start ${load()}\n`);
    // Each fleet's figures as soon as they are measured: a long run stopped midway keeps the rest.
    for (const n of sizes) {
      process.stdout.write(`${(await benchFleet(kubeconfig, n, work, tenants)).join('\n')}\n`);
    }
    process.stdout.write(
      `\nrequests: apiserver_request_total before and after, by verb and resource ` +
        `(the control plane's leases and endpoints, these /metrics reads and the bench's creates of the ApplySets left out).\n` +
        `One controller process (--concurrency 4, the chart's default), watching the fleet's namespace.\n`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
    await controlPlane.stop();
  }
}
