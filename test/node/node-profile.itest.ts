import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../e2e/wait-for.js';
import { PAUSE_IMAGE } from '../harness/node-containerd.js';
import { NODE_NAME, startNodeCluster, type NodeCluster } from '../harness/node-cluster.js';
import { inNodeNetwork } from '../harness/node-network.js';

// The node profile itself: a node that goes Ready and runs a pod from an image imported locally, with
// an address on the node's bridge; and nothing of it left on the machine once it is stopped.

const execFileAsync = promisify(execFile);

describe('the harness node profile', () => {
  let node: NodeCluster;
  let core: k8s.CoreV1Api;

  beforeAll(async () => {
    node = await startNodeCluster({
      ownerPid: process.pid,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(node.controlPlane.kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
  }, 600_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  it('runs a pod on the node with an address from the pod subnet', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'sleeper' },
        spec: {
          containers: [{ name: 'pause', image: PAUSE_IMAGE, imagePullPolicy: 'Never' }],
          automountServiceAccountToken: false,
        },
      },
    });
    const pod = await waitFor(
      'the pod to run',
      async () => {
        const p = await core.readNamespacedPod({ namespace: 'default', name: 'sleeper' });
        return p.status?.phase === 'Running' ? p : undefined;
      },
      60_000,
    );
    expect(pod.spec?.nodeName).toBe(NODE_NAME);
    const prefix = node.network.podCidr.replace(/\.0\/24$/, '.');
    expect(pod.status?.podIP?.startsWith(prefix)).toBe(true);
    // The bridge that gives it the address is the node namespace's, not the host's.
    const bridge = await inNodeNetwork(node.network, 'ip', ['-brief', 'address', 'show', 'cni0']);
    expect(bridge).toContain(`${prefix}1/24`);
    await expect(readFile('/sys/class/net/cni0/address')).rejects.toThrow();
  }, 120_000);

  it('leaves no namespace, interface, mount or process behind once stopped', async () => {
    const { network, nodeDir, containerd } = node;
    await node.stop();
    expect(await readFile('/proc/self/mountinfo', 'utf8')).not.toContain(nodeDir);
    await expect(access(`/run/netns/${network.namespace}`)).rejects.toThrow();
    const links = (await execFileAsync('ip', ['-brief', 'link'])).stdout;
    expect(links).not.toContain(network.namespace.slice(-6));
    expect(containerd.process.exitCode ?? containerd.process.signalCode).not.toBeNull();
    const shims = (await execFileAsync('pgrep', ['-f', containerd.socket]).catch(() => ({ stdout: '' })))
      .stdout;
    expect(shims).toBe('');
  }, 120_000);
});
