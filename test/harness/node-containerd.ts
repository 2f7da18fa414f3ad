/**
 * The node profile's container runtime: a containerd of its own (root, state, socket and config under
 * the node's directory, never the machine's /var/lib/containerd), with its CRI plugin on and the pods'
 * network from the CNI bridge and host-local plugins, run inside the node's network namespace so that
 * the bridge and its iptables rules are the namespace's.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startProcess, tail } from './start-process.js';
import type { NodeNetwork } from './node-network.js';

const execFileAsync = promisify(execFile);

/** Where Debian's containernetworking-plugins puts the plugins. */
const CNI_BIN_DIR = '/usr/lib/cni';

/** The image name the kubelet asks containerd for as every pod's sandbox (our own pause image). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

class NodeRuntimeError extends Error {
  override readonly name = 'NodeRuntimeError';
  readonly code = 'NODE_RUNTIME';
}

export interface NodeContainerd {
  readonly socket: string;
  readonly logPath: string;
  readonly process: ChildProcess;
  /** Imports an image archive (OCI layout or `docker save`) for the kubelet to run. */
  importImage(archivePath: string): Promise<void>;
  /** Kills every container it runs, so that nothing outlives the node once containerd stops. */
  killAll(): Promise<void>;
}

function configToml(dir: string, socket: string): string {
  return `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(dir, 'opt')}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # This machine's sandbox refuses a negative oom_score_adj; without this runc fails to start any
  # container ("can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  enable_selinux = false
  # Pods' network namespaces are mounted under the state directory rather than /run/netns, so that the
  # node's clean-up (which unmounts everything under its directory) finds them.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${join(dir, 'cni')}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
`;
}

function cniConfig(network: NodeNetwork, ipamDir: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'applyset-node',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        // Pods reach the host under the node's address, so the host needs no route back to each pod.
        ipMasq: true,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDir,
          ranges: [[{ subnet: network.podCidr }]],
          routes: [{ dst: '0.0.0.0/0' }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  });
}

/** Starts containerd in the node's namespace and waits until its CRI answers. */
export async function startNodeContainerd(
  dir: string,
  network: NodeNetwork,
  ownerPid: number | undefined,
): Promise<NodeContainerd> {
  await mkdir(join(dir, 'cni'), { recursive: true });
  const socket = join(dir, 'containerd.sock');
  const configPath = join(dir, 'config.toml');
  await writeFile(configPath, configToml(dir, socket));
  await writeFile(join(dir, 'cni', '10-applyset-node.conflist'), cniConfig(network, join(dir, 'ipam')));
  const logPath = join(dir, 'containerd.log');
  const child = startProcess(
    network.enter[0]!,
    [...network.enter.slice(1), 'containerd', '--config', configPath],
    logPath,
    ownerPid,
  );
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exit code ${code ?? signal}`));
  const ctr = async (args: readonly string[]): Promise<string> =>
    (await execFileAsync('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args])).stdout;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== undefined) throw new NodeRuntimeError(`containerd: ${exited}\n${await tail(logPath)}`);
    if (
      await ctr(['version']).then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline)
      throw new NodeRuntimeError(`containerd: not answering after 30 s\n${await tail(logPath)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    socket,
    logPath,
    process: child,
    importImage: async (archivePath) => {
      try {
        await ctr(['images', 'import', '--all-platforms', archivePath]);
      } catch (error) {
        const detail = (error as { stderr?: string }).stderr ?? String(error);
        throw new NodeRuntimeError(`ctr images import ${archivePath}: ${detail}`, { cause: error });
      }
    },
    killAll: async () => {
      const tasks = (await ctr(['tasks', 'list', '--quiet']).catch(() => '')).split('\n').filter(Boolean);
      for (const id of tasks) {
        await ctr(['tasks', 'kill', '--all', '--signal', 'SIGKILL', id]).catch(() => '');
        await ctr(['tasks', 'delete', '--force', id]).catch(() => '');
      }
    },
  };
}
