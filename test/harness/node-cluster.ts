/**
 * The harness's second profile, "node": the control plane of control-plane.ts with the workload
 * controllers on and a scheduler, plus one node (containerd, the CNI bridge, kube-proxy and a kubelet) in
 * a network namespace of its own (node-network.ts), so that pods really run. The default profile (no
 * node) stays what every other test uses; this one costs a build of the node binaries and a start-up of
 * its own, and is started only by the tests under test/node/.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { apiGet, freePort } from './api-get.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { startProcess, stopProcesses, tail } from './start-process.js';
import { startNodeContainerd, type NodeContainerd } from './node-containerd.js';
import { createNodeNetwork, type NodeNetwork } from './node-network.js';
import { NODE_NAME, nodeCommandLines, nodeKubeletConfig, unmountUnder } from './node-kubelet.js';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export { NODE_NAME };

class NodeClusterError extends Error {
  override readonly name = 'NodeClusterError';
  readonly code = 'NODE_CLUSTER';
}

export interface NodeCluster {
  readonly controlPlane: ControlPlane;
  readonly network: NodeNetwork;
  readonly containerd: NodeContainerd;
  /** Where the node's logs and state live (kubelet.log, kube-proxy.log, containerd.log, ...). */
  readonly nodeDir: string;
  stop(): Promise<void>;
}

export interface NodeClusterOptions {
  readonly ownerPid?: number;
  readonly log?: (line: string) => void;
  /** Image archives (OCI layout or `docker save`) to import into the node's containerd. */
  readonly images?: readonly string[];
  readonly readyTimeoutMs?: number;
}

/** Builds kubelet, kube-proxy, kube-scheduler and the pause image (a no-op on a warm cache). */
async function ensureNodeBinaries(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [join(repoRoot, 'scripts/build-node.sh')], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const binDir = stdout.trim().split('\n').pop();
    if (binDir === undefined || binDir === '')
      throw new NodeClusterError('build-node.sh printed no directory');
    return binDir;
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr ?? String(error);
    throw new NodeClusterError(`could not build the node binaries:\n${detail}`, { cause: error });
  }
}

/** The commands the node runs that Debian provides; scripts/build-node.sh --install puts them there. */
const REQUIRED_COMMANDS = ['containerd', 'ctr', 'runc', 'iptables', 'nsenter', 'ip'];

async function checkCommands(): Promise<void> {
  const missing: string[] = [];
  for (const command of REQUIRED_COMMANDS) {
    await execFileAsync('sh', ['-c', `command -v ${command}`]).catch(() => missing.push(command));
  }
  await readFile('/usr/lib/cni/bridge').catch(() => missing.push('/usr/lib/cni/bridge'));
  if (missing.length > 0)
    throw new NodeClusterError(
      `the node profile needs ${missing.join(', ')}: scripts/build-node.sh installs them (as root)`,
    );
}

interface Started {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logPath: string;
  exit?: string;
}

/** Starts a process, recording its exit so waits fail at once, with its log's tail, when it dies. */
function launch(name: string, command: readonly string[], logPath: string, ownerPid?: number): Started {
  const child = startProcess(command[0]!, command.slice(1), logPath, ownerPid);
  const started: Started = { name, child, logPath };
  child.once('exit', (code, signal) => (started.exit = `exit code ${code ?? signal}`));
  return started;
}

async function waitForComponent(
  component: Started,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (component.exit !== undefined)
      throw new NodeClusterError(
        `${component.name} exited (${component.exit}) before ${what}:\n${await tail(component.logPath)}`,
      );
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new NodeClusterError(
        `${component.name}: ${what} not seen after ${timeoutMs} ms:\n${await tail(component.logPath)}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Fails with the log's tail of the first of `components` that has exited. */
async function stillRunning(components: readonly Started[]): Promise<void> {
  for (const component of components) {
    if (component.exit !== undefined)
      throw new NodeClusterError(
        `${component.name} exited (${component.exit}):\n${await tail(component.logPath)}`,
      );
  }
}

async function nodeReady(controlPlane: ControlPlane): Promise<boolean> {
  const { server, caPath, adminToken } = controlPlane;
  const { status, body } = await apiGet(server, `/api/v1/nodes/${NODE_NAME}`, caPath, adminToken);
  if (status !== 200) return false;
  const node = JSON.parse(body) as {
    spec?: { taints?: { key: string }[] };
    status?: { conditions?: { type: string; status: string }[] };
  };
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  // Pods are scheduled only once the node lifecycle controller has lifted the taint a node starts with.
  return ready && !(node.spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/not-ready');
}

/**
 * Starts the node profile: network, control plane (API server on the host end of the node's link),
 * scheduler, containerd (with the pause image and `images` imported), kube-proxy and the kubelet, and
 * waits until the node is Ready. On any failure it stops what it started and throws with the failing
 * component's log tail.
 */
export async function startNodeCluster(options: NodeClusterOptions = {}): Promise<NodeCluster> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  const binDir = await ensureNodeBinaries();
  await checkCommands();
  const nodeDir = await mkdtemp(join(tmpdir(), 'applyset-node-'));
  const started: Started[] = [];
  let network: NodeNetwork | undefined;
  let controlPlane: ControlPlane | undefined;
  let containerd: NodeContainerd | undefined;
  const stop = async (): Promise<void> => {
    // The kubelet goes first so that it restarts nothing, then every container, then containerd.
    await stopProcesses(started.filter((s) => s.name === 'kubelet').map((s) => s.child));
    await containerd?.killAll();
    await stopProcesses(started.map((s) => s.child));
    if (containerd !== undefined) await stopProcesses([containerd.process]);
    await unmountUnder(nodeDir);
    await network?.remove();
    await controlPlane?.stop();
    await rm(nodeDir, { recursive: true, force: true });
  };
  try {
    network = await createNodeNetwork();
    log(`node: namespace ${network.namespace}, node ${network.nodeAddress}, host ${network.hostAddress}`);
    controlPlane = await startControlPlane({
      ownerPid: options.ownerPid,
      log,
      apiAddress: network.hostAddress,
      // Every default controller (deployments, replicasets, endpoints, the service-account token
      // controller, the node lifecycle controller that lifts a new node's not-ready taint, ...) but the
      // cloud provider's.
      controllers: '*,-cloud-node-lifecycle-controller',
      readyTimeoutMs: timeoutMs,
    });

    const commands = nodeCommandLines({
      binDir,
      nodeDir,
      network,
      kubeconfig: controlPlane.kubeconfigPath,
      schedulerPort: await freePort(),
    });
    log('node: starting kube-scheduler');
    const scheduler = launch(
      'kube-scheduler',
      commands.scheduler,
      join(nodeDir, 'kube-scheduler.log'),
      options.ownerPid,
    );
    started.push(scheduler);

    log('node: starting containerd');
    containerd = await startNodeContainerd(join(nodeDir, 'containerd'), network, options.ownerPid);
    for (const image of [join(binDir, 'pause.tar'), ...(options.images ?? [])]) {
      log(`node: importing ${image}`);
      await containerd.importImage(image);
    }

    log('node: starting kube-proxy');
    const proxy = launch('kube-proxy', commands.proxy, join(nodeDir, 'kube-proxy.log'), options.ownerPid);
    started.push(proxy);

    log('node: starting kubelet');
    await writeFile(commands.kubeletConfigPath, nodeKubeletConfig(network, controlPlane.caPath, nodeDir));
    const kubelet = launch(
      'kubelet',
      commands.kubelet(containerd.socket),
      join(nodeDir, 'kubelet.log'),
      options.ownerPid,
    );
    started.push(kubelet);
    await waitForComponent(kubelet, `node ${NODE_NAME} Ready`, () => nodeReady(controlPlane!), timeoutMs);
    await stillRunning([scheduler, proxy]);
    log('node: ready');
    return { controlPlane, network, containerd, nodeDir, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
