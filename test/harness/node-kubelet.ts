/**
 * The node profile's command lines and kubelet configuration, and the clean-up of the mounts a kubelet and containerd
 * leave under the node's directory (pods' volumes, containers' root filesystems) once they are stopped.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NodeNetwork } from './node-network.js';

const execFileAsync = promisify(execFile);

/** The node's name, as `kubectl get nodes` shows it. */
export const NODE_NAME = 'applyset-node';

export interface NodeCommandInputs {
  readonly binDir: string;
  readonly nodeDir: string;
  readonly network: NodeNetwork;
  readonly kubeconfig: string;
  readonly schedulerPort: number;
}

/**
 * The argv of kube-scheduler (on the host, beside the control plane), and of kube-proxy and the kubelet
 * (in the node's namespace).
 */
export function nodeCommandLines({ binDir, nodeDir, network, kubeconfig, schedulerPort }: NodeCommandInputs) {
  const kubeletConfigPath = join(nodeDir, 'kubelet-config.yaml');
  return {
    scheduler: [
      join(binDir, 'kube-scheduler'),
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
      `--cert-dir=${join(nodeDir, 'scheduler-certs')}`,
    ],
    proxy: [
      ...network.enter,
      join(binDir, 'kube-proxy'),
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${NODE_NAME}`,
      '--proxy-mode=iptables',
      `--cluster-cidr=${network.podCidr}`,
      // The namespace's conntrack table is the host's: leave its size alone.
      '--conntrack-max-per-core=0',
      // The node namespace's own loopback: its usual ports cannot clash with anything of the host's.
      '--metrics-bind-address=127.0.0.1:10249',
      '--healthz-bind-address=127.0.0.1:10256',
    ],
    kubeletConfigPath,
    kubelet: (containerdSocket: string) => [
      ...network.enter,
      join(binDir, 'kubelet'),
      `--config=${kubeletConfigPath}`,
      `--kubeconfig=${kubeconfig}`,
      `--container-runtime-endpoint=unix://${containerdSocket}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${network.nodeAddress}`,
      `--root-dir=${join(nodeDir, 'kubelet')}`,
      `--cert-dir=${join(nodeDir, 'kubelet-certs')}`,
      '--v=1',
    ],
  };
}

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
