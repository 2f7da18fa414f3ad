// The chart as a user installs it, on the node profile: helm (scripts/build-helm.sh) installing
// deploy/applyset-controller with the image built from the Dockerfile, and what the tests ask of the
// release afterwards (its pods, its Lease, its Services from inside the node's network).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../e2e/wait-for.js';
import type { ControllerImage } from '../harness/controller-image.js';
import type { NodeCluster } from '../harness/node-cluster.js';
import { inNodeNetwork } from '../harness/node-network.js';

const execFileAsync = promisify(execFile);
const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** The release name the README's install command uses, so the objects carry the names users see. */
const RELEASE = 'applyset-controller';
export const RELEASE_NAMESPACE = 'applyset-system';
/** The controller's pods, by the chart's selector labels. */
const POD_SELECTOR = `app.kubernetes.io/name=applyset-controller,app.kubernetes.io/instance=${RELEASE}`;

async function helmBinary(): Promise<string> {
  const { stdout } = await execFileAsync('bash', [path.join(root, 'scripts/build-helm.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim().split('\n').pop() ?? '';
}

/** `helm install|upgrade` of the chart with `values` (`key=value`, as --set takes them). */
export async function helm(
  node: NodeCluster,
  command: 'install' | 'upgrade',
  image: ControllerImage,
  values: readonly string[],
): Promise<void> {
  const colon = image.reference.lastIndexOf(':');
  const args = [
    command,
    RELEASE,
    path.join(root, 'deploy/applyset-controller'),
    '--namespace',
    RELEASE_NAMESPACE,
    '--kubeconfig',
    node.controlPlane.kubeconfigPath,
    // The node has no registry to pull from: the image is the one imported into its containerd.
    ...['--set', `image.repository=${image.reference.slice(0, colon)}`],
    ...['--set', `image.tag=${image.reference.slice(colon + 1)}`],
    ...['--set', 'image.pullPolicy=Never'],
    ...values.flatMap((value) => ['--set', value]),
  ];
  try {
    await execFileAsync(await helmBinary(), args);
  } catch (error) {
    throw new Error(`helm ${command}: ${(error as { stderr?: string }).stderr ?? String(error)}`, {
      cause: error,
    });
  }
}

/** `helm uninstall` of the release. */
export async function helmUninstall(node: NodeCluster): Promise<void> {
  await execFileAsync(await helmBinary(), [
    'uninstall',
    RELEASE,
    '--namespace',
    RELEASE_NAMESPACE,
    '--kubeconfig',
    node.controlPlane.kubeconfigPath,
    '--wait',
  ]);
}

function isReady(pod: k8s.V1Pod): boolean {
  return (
    pod.metadata?.deletionTimestamp === undefined &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/**
 * Waits until the release has exactly `count` pods, all Ready (their readiness probe passed) and all
 * `accepted`, and returns them. At the deadline it fails with what the pods and the namespace's Events
 * say (scheduled when, started when, probes failed how), so a slow start shows where its time went.
 */
export async function readyPods(
  core: k8s.CoreV1Api,
  count: number,
  accepted: (pod: k8s.V1Pod) => boolean = () => true,
  timeoutMs = 180_000,
): Promise<k8s.V1Pod[]> {
  try {
    return await waitFor(
      `${count} Ready controller pod(s)`,
      async () => {
        const { items } = await core.listNamespacedPod({
          namespace: RELEASE_NAMESPACE,
          labelSelector: POD_SELECTOR,
        });
        const ready = items.filter((pod) => isReady(pod) && accepted(pod));
        return ready.length === count && items.length === count ? ready : undefined;
      },
      timeoutMs,
    );
  } catch (error) {
    const timeline = await podTimeline(core).catch((cause: unknown) => `(no timeline: ${String(cause)})`);
    throw new Error(`${(error as Error).message}\n${timeline}`, { cause: error });
  }
}

const when = (time: Date | string | undefined): string =>
  time === undefined ? '?' : new Date(time).toISOString().slice(11, 19);

/** The release's pods (conditions, container states) and the namespace's Events, in time order. */
async function podTimeline(core: k8s.CoreV1Api): Promise<string> {
  const [{ items: pods }, { items: events }] = await Promise.all([
    core.listNamespacedPod({ namespace: RELEASE_NAMESPACE, labelSelector: POD_SELECTOR }),
    core.listNamespacedEvent({ namespace: RELEASE_NAMESPACE }),
  ]);
  const podLines = pods.flatMap((pod) => [
    `pod ${pod.metadata?.name} created ${when(pod.metadata?.creationTimestamp)}, phase ${pod.status?.phase}`,
    ...(pod.status?.conditions ?? []).map(
      (c) => `  ${c.type}=${c.status} at ${when(c.lastTransitionTime)} ${c.reason ?? ''} ${c.message ?? ''}`,
    ),
    ...(pod.status?.containerStatuses ?? []).map(
      (s) => `  container ${s.name}: ${s.restartCount} restart(s), ${JSON.stringify(s.state)}`,
    ),
  ]);
  const eventLines = events
    .map((e) => ({ at: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp, e }))
    .sort((a, b) => new Date(a.at ?? 0).getTime() - new Date(b.at ?? 0).getTime())
    .map(
      ({ at, e }) =>
        `${when(at)} ${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason} x${e.count ?? 1}: ${e.message}`,
    );
  return [`now ${when(new Date())}`, ...podLines, 'events:', ...eventLines].join('\n');
}

/** The holder of the controllers' leader Lease, once one holds it. */
export async function leaseHolder(coordination: k8s.CoordinationV1Api): Promise<string | undefined> {
  try {
    const lease = await coordination.readNamespacedLease({
      namespace: RELEASE_NAMESPACE,
      name: `${RELEASE}-leader`,
    });
    const holder = lease.spec?.holderIdentity;
    return holder === undefined || holder === '' ? undefined : holder;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** An HTTP request from inside the node's network, as a pod would make it: `[status, body]`. */
export async function curlInNode(
  node: NodeCluster,
  url: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<[number, string]> {
  const args = ['--silent', '--max-time', '5', '--write-out', '\\n%{http_code}', url];
  for (const [name, value] of Object.entries(options.headers ?? {}))
    args.push('--header', `${name}: ${value}`);
  if (options.body !== undefined) args.push('--data-binary', options.body);
  const out = await inNodeNetwork(node.network, 'curl', args);
  const cut = out.lastIndexOf('\n');
  return [Number(out.slice(cut + 1)), out.slice(0, cut)];
}

/** `http://<cluster IP>:<port>` of one of the release's Services. */
export async function serviceUrl(core: k8s.CoreV1Api, suffix: 'metrics' | 'webhook'): Promise<string> {
  const service = await core.readNamespacedService({
    namespace: RELEASE_NAMESPACE,
    name: `${RELEASE}-${suffix}`,
  });
  const port = service.spec?.ports?.[0]?.port;
  return `http://${service.spec?.clusterIP}:${port}`;
}
