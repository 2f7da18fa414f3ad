// One fleet of the controller bench (bench/controller-bench.ts): its namespace, Git server and
// controllers, and the phases measured one after another (bench/fleet-phases.ts).
import { mkdtemp } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ControlPlane } from '../test/harness/control-plane.js';
import { startGitServer } from '../test/harness/git-server.js';
import { isLeader, startFleetController, type FleetController } from './fleet-controller.js';
import { kubectl } from './fleet-requests.js';
import { accountsYaml, fleetFiles, type FleetWorkload } from './fleet-workload.js';

export interface FleetSpec {
  readonly n: number;
  readonly workload: FleetWorkload;
  /** The controller started with --apply-as-controller: no impersonation, no account needed. */
  readonly applyAsController: boolean;
  /** Controller processes, each reconciling the ApplySets of one shard label; 1: no sharding. */
  readonly shards: number;
  readonly tenants: boolean;
  readonly intervalSeconds: number;
  /** The at-rest window, in seconds. */
  readonly restWindowSeconds: number;
  /** Restart kube-apiserver at the end and count the LISTs in the minute after. */
  readonly relist: boolean;
}

/** What every fleet shares: the control plane, the bench's work directory, its kubeconfigs. */
export interface FleetContext {
  readonly controlPlane: ControlPlane;
  readonly work: string;
  /** The control plane's audit policy records this one's requests (the controllers after a restart). */
  readonly auditedKubeconfig: string;
  readonly say: (line: string) => void;
}

/** A fleet being measured. */
export interface Fleet {
  readonly spec: FleetSpec;
  readonly context: FleetContext;
  readonly namespace: string;
  readonly url: string;
  readonly keys: readonly string[];
  /** The keys each shard's controller reconciles (ApplySet i: shard i mod shards). */
  readonly shardKeys: readonly (readonly string[])[];
  readonly cacheDirs: readonly string[];
  controllers: FleetController[];
}

export const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

export function fleetLabel(spec: FleetSpec): string {
  return (
    `N=${spec.n}, ${spec.applyAsController ? '--apply-as-controller' : 'impersonating'}` +
    (spec.shards > 1 ? `, ${spec.shards} shards` : '') +
    (spec.tenants ? `, ${spec.n} ServiceAccounts` : '') +
    (spec.workload === 'configmaps' ? ', 4 ConfigMaps' : '')
  );
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
  }
}

/**
 * Starts one controller per shard with `kubeconfig` (and `extraArgs` after the chart's flags) and
 * waits until each holds its Lease.
 */
export async function startControllers(
  fleet: Fleet,
  kubeconfig: string,
  extraArgs: readonly string[] = [],
): Promise<FleetController[]> {
  const controllers = fleet.cacheDirs.map((cacheDir, shard) =>
    startFleetController({
      kubeconfig,
      namespace: fleet.namespace,
      cacheDir,
      applyAsController: fleet.spec.applyAsController,
      extraArgs,
      // A tree and 4 files per ApplySet, the root tree and the commit, with room to spare.
      fetchObjects: 6 * fleet.spec.n + 100,
      ...(fleet.spec.shards > 1 ? { shard } : {}),
    }),
  );
  await waitUntil(
    'every controller to lead',
    async () => {
      const exited = controllers.find((controller) => controller.exit !== undefined);
      if (exited !== undefined) throw new Error(`a controller exited at start (${exited.exit})`);
      return (await Promise.all(controllers.map((controller) => isLeader(controller)))).every(Boolean);
    },
    120_000,
  );
  return controllers;
}

/** Creates the fleet's namespace, repository and accounts, and starts its controllers. */
export async function openFleet(
  spec: FleetSpec,
  context: FleetContext,
): Promise<Fleet & { close(): Promise<void> }> {
  const namespace =
    `fleet-${spec.n}-${spec.applyAsController ? 'controller' : 'deployer'}` +
    (spec.shards > 1 ? `-s${spec.shards}` : '') +
    (spec.tenants ? '-tenants' : '') +
    (spec.workload === 'configmaps' ? '-cm' : '');
  const kubeconfig = context.controlPlane.kubeconfigPath;
  const git = await startGitServer({ files: fleetFiles(spec.n, spec.workload) });
  await kubectl(kubeconfig, ['create', 'namespace', namespace]);
  if (!spec.applyAsController || spec.tenants) {
    await kubectl(kubeconfig, ['create', '-f', '-'], accountsYaml(namespace, spec.n, spec.tenants));
  }
  const keys = Array.from({ length: spec.n }, (_, i) => `${namespace}/fleet-${i}`);
  const cacheDirs = await Promise.all(
    Array.from({ length: spec.shards }, () => mkdtemp(join(context.work, 'git-cache-'))),
  );
  const fleet = {
    spec,
    context,
    namespace,
    url: git.url,
    keys,
    shardKeys: cacheDirs.map((_, shard) => keys.filter((_key, i) => i % spec.shards === shard)),
    cacheDirs,
    controllers: [] as FleetController[],
    async close() {
      await Promise.all(fleet.controllers.map((controller) => controller.stop()));
      await git.close();
    },
  };
  try {
    fleet.controllers = await startControllers(fleet, kubeconfig);
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return fleet;
}
