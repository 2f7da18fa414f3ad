/**
 * The node profile's kubelet configuration, and the clean-up of the mounts a kubelet and containerd
 * leave under the node's directory (pods' volumes, containers' root filesystems) once they are stopped.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NodeNetwork } from './node-network.js';

const execFileAsync = promisify(execFile);

/** A KubeletConfiguration for one test node: everything under `nodeDir`, nothing evicted. */
export function nodeKubeletConfig(network: NodeNetwork, caPath: string, nodeDir: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${network.nodeAddress}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
# The kubelet's API is reachable from this machine only (the node's namespace); the API server's logs
# and exec requests reach it without a client certificate of their own.
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
  x509:
    clientCAFile: ${caPath}
authorization:
  mode: AlwaysAllow
cgroupDriver: cgroupfs
failSwapOn: false
clusterDomain: cluster.local
resolvConf: ""
podLogsDirectory: ${join(nodeDir, 'pod-logs')}
# A test node is small and short-lived: it must never evict a pod or collect an imported image (there is
# no registry to pull it back from).
evictionHard:
  memory.available: "0%"
  nodefs.available: "0%"
  imagefs.available: "0%"
  nodefs.inodesFree: "0%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 30
podPidsLimit: -1
nodeStatusReportFrequency: 10s
`;
}

/** Unmounts, deepest first, everything still mounted under `dir` (lazily: a busy mount is detached). */
export async function unmountUnder(dir: string): Promise<void> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const points = mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined && point.startsWith(`${dir}/`))
    // Mountinfo escapes spaces as \040; our paths have none, so no unescaping is needed.
    .sort((a, b) => b.length - a.length);
  for (const point of points) {
    await execFileAsync('umount', ['--lazy', point]).catch(() => undefined);
  }
}
