/**
 * The node profile's network: a network namespace of its own for the node (containerd, kubelet,
 * kube-proxy and the pods' bridge), joined to this machine by one veth pair. The control plane stays in
 * the host's namespace and listens on the host end of the pair; the kubelet's node IP is the other end.
 * Everything the node adds (bridge, iptables rules, routes) lives in the namespace, so deleting the
 * namespace takes all of it away; the host keeps only its end of the pair, which goes with it.
 */
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

class NodeNetworkError extends Error {
  override readonly name = 'NodeNetworkError';
  readonly code = 'NODE_NETWORK';
}

export interface NodeNetwork {
  /** The namespace's name under /run/netns. */
  readonly namespace: string;
  /** The host end of the veth pair: where the API server listens and pods reach the host. */
  readonly hostAddress: string;
  /** The node's end: the kubelet's node IP. */
  readonly nodeAddress: string;
  /** The pods' subnet on the node's bridge. */
  readonly podCidr: string;
  /** The command prefix that runs a program in the node's namespace (its network only). */
  readonly enter: readonly string[];
  remove(): Promise<void>;
}

async function run(command: string, args: readonly string[]): Promise<string> {
  try {
    return (await execFileAsync(command, args)).stdout;
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr ?? String(error);
    throw new NodeNetworkError(`${command} ${args.join(' ')}: ${detail.trim()}`, { cause: error });
  }
}

/**
 * Creates the namespace and the veth pair, with addresses from 10.213.<n>.0/30 and pods in
 * 10.214.<n>.0/24 for a random <n>, so that two runs on one machine rarely meet; a clash fails loudly
 * (the address is already on another interface) rather than sharing.
 */
export async function createNodeNetwork(): Promise<NodeNetwork> {
  const n = randomInt(1, 255);
  const id = `${n.toString(16).padStart(2, '0')}${randomInt(0, 0xffff).toString(16).padStart(4, '0')}`;
  const namespace = `applyset-node-${id}`;
  // Interface names are limited to 15 characters.
  const hostLink = `asn${id}h`;
  const nodeLink = `asn${id}n`;
  const hostAddress = `10.213.${n}.1`;
  const nodeAddress = `10.213.${n}.2`;
  const podCidr = `10.214.${n}.0/24`;
  const remove = async (): Promise<void> => {
    // Deleting the namespace destroys its end of the pair, which takes the host's end with it.
    await run('ip', ['netns', 'delete', namespace]).catch(() => undefined);
    await run('ip', ['link', 'delete', hostLink]).catch(() => undefined);
  };
  try {
    await run('ip', ['netns', 'add', namespace]);
    await run('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', nodeLink]);
    await run('ip', ['link', 'set', nodeLink, 'netns', namespace]);
    await run('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', hostLink]);
    await run('ip', ['link', 'set', hostLink, 'up']);
    const inNode = (args: readonly string[]): Promise<string> => run('ip', ['-n', namespace, ...args]);
    await inNode(['link', 'set', 'lo', 'up']);
    await inNode(['addr', 'add', `${nodeAddress}/30`, 'dev', nodeLink]);
    await inNode(['link', 'set', nodeLink, 'up']);
    // The host is the node's only way out, as a router would be; nothing beyond it is routed (the host
    // does not forward for the namespace), so pods reach this machine and nothing else.
    await inNode(['route', 'add', 'default', 'via', hostAddress]);
    // The API server reaches pods (service proxy, webhooks) through the node.
    await run('ip', ['route', 'add', podCidr, 'via', nodeAddress, 'dev', hostLink]);
    const enter = ['nsenter', `--net=/run/netns/${namespace}`, '--'];
    // Pods' traffic is routed through the node's namespace, and Services between pods on one bridge
    // need the bridge's frames to pass iptables.
    await run(enter[0]!, [...enter.slice(1), 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    await run(enter[0]!, [...enter.slice(1), 'sysctl', '-q', '-w', 'net.bridge.bridge-nf-call-iptables=1']);
    return { namespace, hostAddress, nodeAddress, podCidr, enter, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** Runs a command inside the node's namespace and returns what it printed. */
export async function inNodeNetwork(
  network: NodeNetwork,
  command: string,
  args: readonly string[],
): Promise<string> {
  return run(network.enter[0]!, [...network.enter.slice(1), command, ...args]);
}
