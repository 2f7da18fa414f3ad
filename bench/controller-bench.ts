// Controller benchmark (issues #14 and #39, fleet scale): N ApplySets of Flux's benchmark app (a
// Deployment, a ServiceAccount, a Service and an Ingress each) from one repository URL, on a local
// control plane of its own (so the API server's counters hold our requests only), with the chart's
// defaults: each ApplySet applied as applyset-deployer of its namespace, --leader-elect,
// --concurrency 4, the image's node flags. Run: npm run bench -- --controller 100,1000
//   --apply-as-controller  the controller applies as itself instead (no impersonation)
//   --both                 each size twice, impersonating then --apply-as-controller, side by side
//   --shards 4             the fleet split over 4 controller processes (label selector + Lease each)
//   --configmaps           4 ConfigMaps per ApplySet instead of Flux's app (the bench before #39)
//   --tenants              each ApplySet applied as a ServiceAccount of its own
//   --interval S           spec.interval (default max(60, N × 0.06) s)
//   --rest-window S        the at-rest window (default 90 s)
//   --no-relist            skip the kube-apiserver restart at the end of each run
// Phases, one after another on a fresh namespace per run: create all, wait all Ready (the first
// reconcile of each); the second reconcile of each; a fixed window at rest; the controllers stopped
// (SIGTERM) and started again; kube-apiserver stopped and started again (bench/fleet-phases.ts).
// The controller runs from dist/ (built first), with the node flags in APPLYSET_BENCH_NODE_FLAGS if set,
// e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where its time goes.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startControlPlane } from '../test/harness/control-plane.js';
import {
  apiServerRelist,
  atRest,
  firstReconcile,
  restartControllers,
  secondReconcile,
} from './fleet-phases.js';
import { summaryTable, type FleetResult } from './fleet-report.js';
import { auditedKubeconfig, kubectl } from './fleet-requests.js';
import { fleetLabel, load, openFleet, type FleetContext, type FleetSpec } from './fleet-run.js';
import type { FleetWorkload } from './fleet-workload.js';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '..');

export interface ControllerBenchOptions {
  readonly sizes: readonly number[];
  /** The variants to run for each size, in order: false impersonating, true --apply-as-controller. */
  readonly applyAsController: readonly boolean[];
  readonly shards: number;
  readonly workload: FleetWorkload;
  readonly tenants: boolean;
  readonly intervalSeconds: number | undefined;
  readonly restWindowSeconds: number;
  readonly relist: boolean;
}

/**
 * The interval: past the burst of creates (0.035-0.04 s per ApplySet on a quiet machine here, 0.12 s
 * at a load of 12), so that no ApplySet is reconciled twice before all are Ready, and no longer, so
 * the second reconcile comes soon.
 */
const defaultInterval = (n: number) => Math.max(60, Math.ceil(n * 0.06));

async function runFleet(spec: FleetSpec, context: FleetContext): Promise<FleetResult> {
  const result: FleetResult = { label: fleetLabel(spec), spec, loadStart: load() };
  context.say(`${result.label} (interval ${spec.intervalSeconds} s; load ${result.loadStart})`);
  const fleet = await openFleet(spec, context);
  try {
    result.first = await firstReconcile(fleet);
    result.second = await secondReconcile(fleet);
    result.rest = await atRest(fleet);
    result.restart = await restartControllers(fleet);
    if (spec.relist) result.relist = await apiServerRelist(fleet);
  } catch (error) {
    context.say(`  stopped: ${(error as Error).message}`);
  } finally {
    await fleet.close();
    result.loadEnd = load();
    context.say(`  load at the end ${result.loadEnd}`);
  }
  return result;
}

function specsOf(options: ControllerBenchOptions): FleetSpec[] {
  return options.sizes.flatMap((n) =>
    options.applyAsController.map((applyAsController) => ({
      n,
      applyAsController,
      workload: options.workload,
      shards: options.shards,
      tenants: options.tenants,
      intervalSeconds: options.intervalSeconds ?? defaultInterval(n),
      restWindowSeconds: options.restWindowSeconds,
      relist: options.relist,
    })),
  );
}

const FOOTER =
  `\nrequests: apiserver_request_total before and after each phase, by verb and resource (the control ` +
  `plane's leases, endpoints and Service IPAddresses, the controllers' Leases, the /metrics reads and the bench's creates of the ` +
  `ApplySets left out); after the API server restart, the controllers' own requests from its audit log.\n` +
  `Chart defaults: --leader-elect, --concurrency 4, the image's node flags and allocator (jemalloc); ` +
  `each ApplySet applied as applyset-deployer of its namespace unless --apply-as-controller; ` +
  `beyond them, --shared-fetch-max-age 10s (a fleet created in bulk fetches once) and --git-max-fetch-objects raised. ` +
  `Interval: max(60 s, N × 0.06 s) unless --interval, so that the burst of creates ends before the first ` +
  `ApplySet is due again. At rest: a fixed window from when half the fleet was reconciled a ` +
  `third time, the reconciles counted from the controllers' logs.\n`;

export async function runControllerBench(options: ControllerBenchOptions): Promise<void> {
  process.stderr.write('building dist/ and starting a local control plane...\n');
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  await execFileAsync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot });
  const controlPlane = await startControlPlane({
    ownerPid: process.pid,
    // `kubectl get --raw '/debug/pprof/profile?seconds=30'` during a phase: where the API server's CPU goes.
    profiling: process.env.APPLYSET_BENCH_APISERVER_PROFILING === '1',
  });
  const work = await mkdtemp(join(tmpdir(), 'applyset-controller-bench-'));
  let context: FleetContext | undefined;
  const results: FleetResult[] = [];
  try {
    context = {
      controlPlane,
      work,
      auditedKubeconfig: await auditedKubeconfig(controlPlane, work),
      say: (line) => process.stdout.write(`${line}\n`),
    };
    const kubeconfig = controlPlane.kubeconfigPath;
    await kubectl(kubeconfig, ['apply', '-f', join(repoRoot, 'crds')]);
    await kubectl(kubeconfig, ['wait', '--for', 'condition=Established', 'crd/applysets.applyset.dev']);
    // Each fleet's figures as soon as they are measured: a long run stopped midway keeps the rest.
    for (const spec of specsOf(options)) results.push(await runFleet(spec, context));
    process.stdout.write(`\n${summaryTable(results)}\n${FOOTER}`);
  } finally {
    await rm(work, { recursive: true, force: true });
    await controlPlane.stop();
  }
}
