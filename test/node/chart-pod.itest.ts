import { createHmac } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  kubectl,
  waitFor,
  waitForAppliedCommit,
  type Cluster,
} from '../e2e/e2e-kit.js';
import { provisionDeployer } from '../e2e/default-deployer.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { startNodeCluster, type NodeCluster } from '../harness/node-cluster.js';
import { forwardToNode, type NodeForward } from '../harness/node-forward.js';
import { controllerImage, type ControllerImage } from '../harness/controller-image.js';
import {
  curlInNode,
  helm,
  helmUninstall,
  leaseHolder,
  readyPods,
  RELEASE_NAMESPACE,
  serviceUrl,
} from './chart-release.js';

// Issue #25: what users install is what is tested. `helm install` of the chart with the image built
// from the Dockerfile, on a node that runs its pod: the pod must pass its own probes as the chart's
// non-root, read-only securityContext sets it, find the API server through its in-cluster configuration
// (the projected token and the kubernetes Service), hold the Lease, fetch from a Git server over the
// pod network, and answer on its Services.

const SECRET = 'chart-pod-hook-secret';
const INSTALL_VALUES = ['webhook.enabled=true', 'webhook.secretName=hooks'];
const podName = (pod: k8s.V1Pod | undefined): string => pod?.metadata?.name ?? '';
/**
 * How long the release's first pod may take to be Ready after `helm install`. Measured on this 2-core
 * machine: 9 s alone, 13 s with the load average at 8 (scheduled and started within 2 s, Ready at the
 * second readiness probe). Under a full CI run beside other work it once took just over 300 s, while
 * every later pod of the file (helm upgrade, fail-over) was Ready in seconds: a first attempt that
 * fails under load (the pod found unschedulable, or its sandbox not set up) is retried by Kubernetes
 * after back-offs that end at 5 minutes (the scheduler's retry of an unschedulable pod, the kubelet's
 * of a pod that failed to start). So 5 minutes and a margin. A crash loop is not hidden by it: the test
 * then fails on the restart count, and readyPods says at its deadline where the time went.
 */
const FIRST_POD_READY_MS = 390_000;

describe('the chart installed with the built image, on a node', () => {
  let node: NodeCluster;
  let image: ControllerImage;
  let c: Cluster;
  let git: GitTestServer;
  let relay: NodeForward;
  const namespace = 'team-a';

  beforeAll(async () => {
    image = await controllerImage();
    node = await startNodeCluster({
      ownerPid: process.pid,
      images: [image.archivePath],
      log: (line) => process.stderr.write(`${line}\n`),
    });
    // The e2e kit's helpers (ApplySets, ConfigMaps, deployers) act on the cluster this names.
    process.env.APPLYSET_TEST_KUBECONFIG = node.controlPlane.kubeconfigPath;
    c = cluster();
    git = await startGitServer({ files: { 'cm.yaml': configMapYaml('from-git', { v: '1' }) } });
    relay = await forwardToNode(node.network, git.url);
    await c.core.createNamespace({ body: { metadata: { name: RELEASE_NAMESPACE } } });
    await c.core.createNamespace({ body: { metadata: { name: namespace } } });
    await provisionDeployer(namespace);
    await c.core.createNamespacedSecret({
      namespace: RELEASE_NAMESPACE,
      body: { metadata: { name: 'hooks' }, stringData: { 'main-repo': SECRET } },
    });
    await helm(node, 'install', image, INSTALL_VALUES);
  }, 900_000);

  afterAll(async () => {
    await relay?.close();
    await git?.close();
    await node?.stop();
  }, 120_000);

  it('becomes Ready through its probes and holds the Lease', async () => {
    const [pod] = await readyPods(c.core, 1, undefined, FIRST_POD_READY_MS);
    const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
    const holder = await waitFor('the Lease to be held', () => leaseHolder(coordination), 60_000);
    expect(holder).toBe(pod?.metadata?.name);
    // Ready came from the probe against the running container, not from a container merely started.
    expect(pod?.status?.containerStatuses?.[0]?.ready).toBe(true);
    expect(pod?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    // What the chart's securityContext promises, seen from inside the running container: not root, and
    // a root filesystem mounted read-only.
    const seen = await kubectl([
      'exec',
      '--namespace',
      RELEASE_NAMESPACE,
      podName(pod),
      '--',
      'sh',
      '-c',
      'id -u; grep " / " /proc/self/mounts',
    ]);
    const [uid, rootMount] = seen.trim().split('\n');
    expect(uid).toBe('65532');
    expect(rootMount?.split(' ')[3]?.split(',')).toContain('ro');
    // FIRST_POD_READY_MS, then the Lease (60 s) and the exec.
  }, 480_000);

  it('reconciles an ApplySet from Git over the pod network, with its in-cluster configuration', async () => {
    await createApplySet(c, namespace, 'site', { url: relay.url, interval: '1h' });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 120_000);
    expect(await configMapData(c, namespace, 'from-git')).toEqual({ v: '1' });
  }, 180_000);

  it('serves /metrics through its Service', async () => {
    const url = `${await serviceUrl(c.core, 'metrics')}/metrics`;
    const [status, body] = await waitFor(
      'the metrics Service to answer with a reconcile counted',
      async () => {
        const answer = await curlInNode(node, url);
        return answer[1].includes('applyset_reconciles_total{') ? answer : undefined;
      },
      60_000,
    );
    expect(status).toBe(200);
    expect(body).toMatch(/^applyset_ready\{.*namespace="team-a".*\} 1$/m);
  }, 120_000);

  /** A push of branch main to the release's webhook Service, from inside the cluster's network. */
  const push = async (key: string): Promise<[number, string]> => {
    const body = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: relay.url } });
    return curlInNode(node, `${await serviceUrl(c.core, 'webhook')}/hook/main-repo`, {
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-hub-signature-256': `sha256=${createHmac('sha256', key).update(body).digest('hex')}`,
      },
      body,
    });
  };

  it('applies a signed push taken on its webhook Service, and refuses a forged one', async () => {
    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('from-git', { v: '2' }) });
    expect((await push('a guess'))[0]).toBe(401);
    const [status, answer] = await push(SECRET);
    expect(status).toBe(202);
    expect(JSON.parse(answer)).toEqual({ matched: 1 });
    // The interval is an hour: only the push can have brought the new commit in.
    await waitForAppliedCommit(c, namespace, 'site', sha, 60_000);
    expect(await configMapData(c, namespace, 'from-git')).toEqual({ v: '2' });
  }, 120_000);

  it('rolls its pod on helm upgrade to a changed value, and the new pod takes the reconciles over', async () => {
    const [before] = await readyPods(c.core, 1);
    // Committed before the upgrade and never pushed: with an hour's interval, only the new pod's first
    // reconciles as leader can apply it.
    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('from-git', { v: '3' }) });
    await helm(node, 'upgrade', image, [...INSTALL_VALUES, 'logLevel=debug']);
    const [after] = await readyPods(c.core, 1, (pod) => podName(pod) !== podName(before));
    const env = after?.spec?.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'LOG_LEVEL')?.value).toBe('debug');
    const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
    await waitFor(
      'the new pod to hold the Lease',
      async () => ((await leaseHolder(coordination)) === podName(after) ? true : undefined),
      90_000,
    );
    await waitForAppliedCommit(c, namespace, 'site', sha, 90_000);
    expect(await configMapData(c, namespace, 'from-git')).toEqual({ v: '3' });
  }, 300_000);

  it('fails over to another pod when the leader pod is deleted', async () => {
    await helm(node, 'upgrade', image, [...INSTALL_VALUES, 'logLevel=debug', 'replicas=2']);
    const pods = await readyPods(c.core, 2);
    const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
    const leader = await waitFor('a leader', () => leaseHolder(coordination), 60_000);
    const standby = pods.map(podName).find((name) => name !== leader);
    expect(pods.map(podName)).toContain(leader);
    await c.core.deleteNamespacedPod({ namespace: RELEASE_NAMESPACE, name: leader });
    // The standby, or the pod that replaces the deleted one: either way not the pod that is gone.
    const next = await waitFor(
      'another pod to take the Lease',
      async () => {
        const holder = await leaseHolder(coordination);
        return holder !== undefined && holder !== leader ? holder : undefined;
      },
      90_000,
    ).catch(async (error: unknown) => {
      const holder = await leaseHolder(coordination);
      throw new Error(`${(error as Error).message} (held by ${holder}; standby ${standby})`, {
        cause: error,
      });
    });
    expect(next).not.toBe(leader);
    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('from-git', { v: '4' }) });
    await waitFor(
      'the webhook to take the push',
      async () => ((await push(SECRET))[0] === 202 ? true : undefined),
      30_000,
    );
    await waitForAppliedCommit(c, namespace, 'site', sha, 60_000);
  }, 300_000);

  it('helm uninstall takes the controller away and leaves the ApplySets and what they applied', async () => {
    await helmUninstall(node);
    await readyPods(c.core, 0);
    // The CRD comes from the chart's crds/, which helm never deletes: the ApplySets, their finalizers
    // (still guarding a deletion for a controller installed again) and their objects all stay.
    const site = await getApplySet(c, namespace, 'site');
    expect(site?.metadata.finalizers?.length).toBeGreaterThan(0);
    expect(await configMapData(c, namespace, 'from-git')).toEqual({ v: '4' });
  }, 120_000);
});
