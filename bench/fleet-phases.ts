// The phases of one fleet run, each printing its figures as soon as it has them (a long run stopped
// midway keeps the rest) and returning them for the summary table (bench/fleet-report.ts).
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import {
  memoryBreakdown,
  mib,
  reconciledSince,
  reconciledTimes,
  reconcilesBetween,
  metricValues,
  processCpuSeconds,
  rssSplit,
  type FleetController,
  takeWarnings,
} from './fleet-controller.js';
import {
  auditedSince,
  countsOf,
  delta,
  kubectl,
  lists,
  perUnit,
  serverRequests,
  sum,
  writesNamed,
  type RequestCounts,
} from './fleet-requests.js';
import { startControllers, waitUntil, type Fleet } from './fleet-run.js';
import { applySetDocuments } from './fleet-workload.js';

export interface ShardFigures {
  readonly readySeconds: number;
  readonly cpuSeconds: number;
  readonly peakRss: number;
  /** When the peak was sampled, in seconds from the first create, and the reconciles logged by then. */
  readonly peakAt: { readonly seconds: number; readonly reconciles: number };
}

export interface FirstFigures {
  readonly readySeconds: number;
  readonly cpuSeconds: number;
  /** Of each shard (one for an unsharded fleet). */
  readonly shards: readonly ShardFigures[];
  readonly requests: RequestCounts;
}

const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
const seconds = (ms: number) => (ms / 1000).toFixed(1);
const HOUR = 60 * 60_000;

function checkAlive(controllers: readonly FleetController[]): void {
  const exited = controllers.findIndex((controller) => controller.exit !== undefined);
  if (exited >= 0) throw new Error(`controller ${exited} exited (${controllers[exited]?.exit})`);
}

/** When the last of `keys` was first logged reconciled, relative to `since` (ms). */
function lastFirstReconcile(controller: FleetController, keys: readonly string[], since: number): number {
  let last = since;
  for (const key of keys) {
    const first = controller.reconciles.get(key)?.find((time) => time >= since);
    if (first !== undefined) last = Math.max(last, first);
  }
  return last - since;
}

/** When the controller's earliest reconcile since `since` ran, after `since`: its start's cost. */
function firstReconcileSince(controller: FleetController, keys: readonly string[], since: number): number {
  let first = Number.POSITIVE_INFINITY;
  for (const key of keys) {
    const time = controller.reconciles.get(key)?.find((at) => at >= since);
    if (time !== undefined) first = Math.min(first, time);
  }
  return first - since;
}

/**
 * The CPU seconds each program of the control plane (etcd, kube-apiserver, kube-controller-manager)
 * used, by name: the harness starts each under a shell that watches the bench's pid, so the programs
 * are that shell's descendants.
 */
async function controlPlaneCpu(fleet: Fleet): Promise<Map<string, number>> {
  const used = new Map<string, number>();
  const pids = (await Promise.all(fleet.context.controlPlane.pids.map(descendants))).flat();
  for (const pid of pids) {
    const name = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
    if (!/^(etcd|kube-)/.test(name)) continue;
    used.set(name, (used.get(name) ?? 0) + (await processCpuSeconds(pid).catch(() => 0)));
  }
  return used;
}

/** `pid` and every process under it, from /proc's children lists. */
async function descendants(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const below = await Promise.all(children.trim().split(/\s+/).filter(Boolean).map(Number).map(descendants));
  return [pid, ...below.flat()];
}

/** kubectl processes creating the fleet's ApplySets side by side. */
const CREATE_STREAMS = 8;

/** Creates the ApplySets and waits until every one is reconciled once: each shard's figures. */
export async function firstReconcile(fleet: Fleet): Promise<FirstFigures> {
  const { controllers, shardKeys, spec } = fleet;
  const kubeconfig = fleet.context.controlPlane.kubeconfigPath;
  const before = await serverRequests(kubeconfig);
  const cpuBefore = await Promise.all(controllers.map((controller) => controller.cpuSeconds()));
  const controlPlaneBefore = await controlPlaneCpu(fleet);
  const shards: (ShardFigures | undefined)[] = controllers.map(() => undefined);
  const started = performance.now();
  // One kubectl creates one object at a time (35-40 ms each on these cores): 10,000 in one stream would
  // take longer than the goal of 5 minutes. CREATE_STREAMS of them at once, as a fleet applied by CI.
  const documents = applySetDocuments({ ...spec, namespace: fleet.namespace, url: fleet.url });
  await Promise.all(
    Array.from({ length: CREATE_STREAMS }, (_, stream) =>
      documents.filter((_document, i) => i % CREATE_STREAMS === stream).join('---\n'),
    )
      .filter((yaml) => yaml !== '')
      .map((yaml) => kubectl(kubeconfig, ['create', '-f', '-'], yaml)),
  );
  const createdSeconds = (performance.now() - started) / 1000;
  await waitUntil(
    'every ApplySet Ready',
    async () => {
      checkAlive(controllers);
      for (const [shard, controller] of controllers.entries()) {
        if (shards[shard] !== undefined || !reconciledTimes(controller, shardKeys[shard] ?? [], 1)) continue;
        shards[shard] = {
          readySeconds: lastFirstReconcile(controller, shardKeys[shard] ?? [], started) / 1000,
          cpuSeconds: (await controller.cpuSeconds()) - (cpuBefore[shard] ?? 0),
          peakRss: controller.rss.peak,
          peakAt: {
            seconds: (controller.rss.peakAt - started) / 1000,
            reconciles: controller.rss.reconcilesAtPeak,
          },
        };
      }
      return shards.every((figures) => figures !== undefined);
    },
    HOUR,
  );
  const controlPlaneUsed = await controlPlaneCpu(fleet);
  const done = shards.filter((figures) => figures !== undefined);
  const twice = fleet.keys.filter((key) => controllers.some((c) => (c.reconciles.get(key)?.length ?? 0) > 1));
  const figures: FirstFigures = {
    readySeconds: Math.max(...done.map((figures) => figures.readySeconds)),
    cpuSeconds: done.reduce((total, figures) => total + figures.cpuSeconds, 0),
    shards: done,
    requests: delta(before, await serverRequests(kubeconfig)),
  };
  const say = fleet.context.say;
  say(`  created in ${createdSeconds.toFixed(1)} s by ${CREATE_STREAMS} kubectl create at once`);
  say(`  the controllers' warnings and relists until all were Ready: ${takeWarnings(controllers)}`);
  say(
    `  all Ready in ${figures.readySeconds.toFixed(1)} s; controller CPU until then ${figures.cpuSeconds.toFixed(1)} s ` +
      `(${((figures.cpuSeconds / figures.readySeconds) * 100).toFixed(0)}% of the wall time); ` +
      `peak RSS ${done.map((shard) => mib(shard.peakRss)).join(' + ')} ` +
      `(${done.map(({ peakAt }) => `at ${peakAt.seconds.toFixed(1)} s, ${peakAt.reconciles} reconciles logged`).join('; ')})`,
  );
  say(
    `  the control plane's CPU until then: ${[...controlPlaneUsed]
      .map(([name, used]) => `${name} ${(used - (controlPlaneBefore.get(name) ?? 0)).toFixed(1)} s`)
      .join(', ')}`,
  );
  if (done.length > 1) {
    for (const [shard, f] of done.entries()) {
      say(
        `    shard${shard}: Ready in ${f.readySeconds.toFixed(1)} s, CPU ${f.cpuSeconds.toFixed(1)} s, peak RSS ${mib(f.peakRss)}`,
      );
    }
  }
  say(
    `  first reconcile, requests per ApplySet: ${perUnit(figures.requests, spec.n)}; ` +
      `total ${(sum(figures.requests) / spec.n).toFixed(2)}; LISTs ${lists(figures.requests)} in all`,
  );
  if (twice.length > 0) {
    say(`  (!) ${twice.length} ApplySets were reconciled twice before all were Ready: raise --interval`);
  }
  return figures;
}

/** Waits until every ApplySet was reconciled twice: the requests per ApplySet, and the writes. */
export async function secondReconcile(fleet: Fleet): Promise<RequestCounts> {
  const kubeconfig = fleet.context.controlPlane.kubeconfigPath;
  const before = await serverRequests(kubeconfig);
  await waitUntil(
    'a second reconcile each',
    () => {
      checkAlive(fleet.controllers);
      return fleet.controllers.every((c, shard) => reconciledTimes(c, fleet.shardKeys[shard] ?? [], 2));
    },
    HOUR,
  );
  const requests = delta(before, await serverRequests(kubeconfig));
  fleet.context.say(
    `  second reconcile, per ApplySet: ${perUnit(requests, fleet.spec.n)}; ` +
      `total ${(sum(requests) / fleet.spec.n).toFixed(2)}; writes ${writesNamed(requests)} in all`,
  );
  return requests;
}

export interface RestFigures {
  readonly reconciles: number;
  readonly cpuMsPerReconcile: number;
  readonly requests: RequestCounts;
  readonly idleRss: number;
}

/**
 * At rest: once half the fleet was reconciled a third time (the middle of the fleet's next round), a
 * fixed window of spec.restWindowSeconds; the reconciles counted are those the controllers logged in
 * the window. Each set's round repeats the shape of the burst, whose first minutes reconciled few sets
 * while the creates held the API server: at 10,000 a window from the first third reconcile on held 147
 * reconciles in 60 s where 10,000 sets due every 600 s make 17 a second on average, and the process's
 * background work, divided by so few, was most of the figure.
 */
export async function atRest(fleet: Fleet): Promise<RestFigures> {
  const { controllers, spec } = fleet;
  const kubeconfig = fleet.context.controlPlane.kubeconfigPath;
  await waitUntil(
    'the middle of the next round of reconciles',
    () => thirdTimes(controllers) >= Math.ceil(spec.n / 2),
    2 * spec.intervalSeconds * 1000 + HOUR,
  );
  const before = await serverRequests(kubeconfig);
  const unchangedBefore = await unchangedTotal(controllers);
  const cpuBefore = await Promise.all(controllers.map((controller) => controller.cpuSeconds()));
  const from = performance.now();
  await sleep(spec.restWindowSeconds * 1000);
  checkAlive(controllers);
  const to = performance.now();
  const cpu = (await Promise.all(controllers.map((c) => c.cpuSeconds()))).reduce(
    (total, value, i) => total + value - (cpuBefore[i] ?? 0),
    0,
  );
  const requests = delta(before, await serverRequests(kubeconfig));
  const unchanged = (await unchangedTotal(controllers)) - unchangedBefore;
  const reconciles = reconcilesBetween(controllers, from, to);
  const figures: RestFigures = {
    reconciles,
    cpuMsPerReconcile: (cpu * 1000) / Math.max(reconciles, 1),
    requests,
    idleRss: controllers.reduce((total, c) => total + c.rss.last, 0),
  };
  const first = controllers[0];
  const memory =
    controllers.length === 1 && first !== undefined
      ? ` (${await rssSplit(first)}; ${await memoryBreakdown(first)})`
      : ` (${controllers.map((c) => mib(c.rss.last)).join(' + ')})`;
  fleet.context.say(
    `  at rest (${seconds(to - from)} s window, ${reconciles} reconciles, interval ${spec.intervalSeconds} s): ` +
      `controller CPU ${figures.cpuMsPerReconcile.toFixed(1)} ms per reconcile ` +
      `(${((cpu * 1000 * 100) / (to - from)).toFixed(1)}% of the window); per reconcile: ` +
      `${perUnit(requests, Math.max(reconciles, 1))}; total ${(sum(requests) / Math.max(reconciles, 1)).toFixed(2)}; ` +
      `writes ${writesNamed(requests)}; answered from their last run in full: ${unchanged}; ` +
      `idle RSS ${mib(figures.idleRss)}${memory}`,
  );
  return figures;
}

/** How many ApplySets the controllers logged as reconciled three times or more. */
function thirdTimes(controllers: readonly FleetController[]): number {
  let count = 0;
  for (const controller of controllers) {
    for (const times of controller.reconciles.values()) if (times.length >= 3) count += 1;
  }
  return count;
}

/** The reconciles answered from the steady-runs memo so far, over every controller. */
async function unchangedTotal(controllers: readonly FleetController[]): Promise<number> {
  const name = 'applyset_reconciles_unchanged_total';
  const values = await Promise.all(controllers.map((c) => metricValues(c, [name])));
  return values.reduce((total, value) => total + value[name], 0);
}

export interface RestartFigures {
  readonly stopSeconds: number;
  readonly readySeconds: number;
  readonly requests: RequestCounts;
}

/**
 * The Lease of the controllers started again, when the API server restart follows: long enough to
 * outlast the API server's absence (tens of seconds on a loaded machine). With the chart's 15 s and
 * 10 s, a leader that cannot renew for 10 s steps down and exits (for its pod to be restarted), and
 * what the bench would count is a start's LISTs, not a relist's.
 */
const OUTAGE_LEASE = ['--lease-duration', '300s', '--renew-deadline', '240s'];

/**
 * SIGTERM to every controller, then the same controllers started again (as the audited user and with
 * OUTAGE_LEASE when the relist phase follows): the time until every ApplySet was reconciled once, and
 * what was sent meanwhile.
 */
export async function restartControllers(fleet: Fleet): Promise<RestartFigures> {
  const kubeconfig = fleet.context.controlPlane.kubeconfigPath;
  const before = await serverRequests(kubeconfig);
  const stopping = performance.now();
  await Promise.all(fleet.controllers.map((controller) => controller.stop()));
  const started = performance.now();
  fleet.controllers = await startControllers(
    fleet,
    fleet.context.auditedKubeconfig,
    fleet.spec.relist ? OUTAGE_LEASE : [],
  );
  await waitUntil(
    'a reconcile of each after the restart',
    () => {
      checkAlive(fleet.controllers);
      return reconciledSince(fleet.controllers, fleet.keys, started);
    },
    2 * fleet.spec.intervalSeconds * 1000 + HOUR,
  );
  const readyMs = Math.max(
    ...fleet.controllers.map((c, shard) => lastFirstReconcile(c, fleet.shardKeys[shard] ?? [], started)),
  );
  // The started processes' CPU (from their start) and their first reconcile: what a restart spends
  // before reconciling (Node's start, the informers' LISTs) apart from the resync itself.
  const cpu = (await Promise.all(fleet.controllers.map((c) => c.cpuSeconds()))).reduce((a, b) => a + b, 0);
  const firstMs = Math.min(
    ...fleet.controllers.map((c, shard) => firstReconcileSince(c, fleet.shardKeys[shard] ?? [], started)),
  );
  const requests = delta(before, await serverRequests(kubeconfig));
  const figures = { stopSeconds: (started - stopping) / 1000, readySeconds: readyMs / 1000, requests };
  fleet.context.say(
    `  restart: stopped in ${figures.stopSeconds.toFixed(1)} s; the first ApplySet reconciled ` +
      `${(firstMs / 1000).toFixed(1)} s after the start, every ApplySet ` +
      `${figures.readySeconds.toFixed(1)} s after; controller CPU by then ${cpu.toFixed(1)} s ` +
      `(${((cpu * 1000) / Math.max(fleet.spec.n, 1)).toFixed(1)} ms per ApplySet, its start ` +
      `included); writes ${writesNamed(requests)}; ` +
      `per ApplySet: ${perUnit(requests, fleet.spec.n)}; LISTs ${lists(requests)} in all`,
  );
  return figures;
}

export interface RelistFigures {
  readonly downSeconds: number;
  readonly requests: RequestCounts;
  readonly exited: number;
}

/** kube-apiserver stopped and started again: what the controllers sent until 60 s after it was back. */
export async function apiServerRelist(fleet: Fleet): Promise<RelistFigures> {
  const { context } = fleet;
  const since = Date.now();
  // Stopped (SIGTERM), started again at once on the same port and etcd, and ready (/readyz 200).
  await context.controlPlane.restartApiServer(0);
  const downSeconds = (Date.now() - since) / 1000;
  await sleep(60_000);
  // The audit log records a request once answered: ask nothing more, let the last LISTs land.
  await sleep(1000);
  const requests = await auditedSince(context.controlPlane, since);
  const exited = fleet.controllers.filter((controller) => controller.exit !== undefined).length;
  context.say(
    `  the controllers' warnings and relists since their restart: ${takeWarnings(fleet.controllers)}`,
  );
  context.say(
    `  API server restart: down ${downSeconds.toFixed(1)} s; in the 60 s after: LISTs ` +
      `${countsOf(requests, ['LIST'])} (${lists(requests)} in all, ` +
      `${fleet.controllers.length} controller${fleet.controllers.length > 1 ? 's' : ''}); ` +
      `writes ${writesNamed(requests)}; all requests ${sum(requests)}` +
      (exited > 0
        ? `; ${exited} controller(s) exited (${fleet.controllers.map((c) => c.exit ?? 'running').join(', ')})`
        : ''),
  );
  return { downSeconds, requests, exited };
}
