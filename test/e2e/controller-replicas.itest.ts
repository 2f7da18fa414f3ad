import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import * as yaml from 'js-yaml';
import { createNamespace, kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  httpGet,
  installCrd,
  kubectl,
  kubectlApply,
  repoRoot,
  startController,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { metricsLines } from './controller-metrics.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';

// Running for real: two replicas elect one leader and hand over when it dies; SIGTERM is graceful;
// the probes and metrics answer; the Helm chart's RBAC is enough for the controller to do its job.

const execFileAsync = promisify(execFile);
const LEASE = 'applyset-controller-leader';

describe('the controller as a deployment runs it', () => {
  const c = cluster();
  const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
  const servers = new GitServerPool();

  afterAll(() => stopControllersAndGit(servers));

  beforeAll(async () => {
    await installCrd();
  });

  const holder = async (namespace: string) => {
    try {
      return (await coordination.readNamespacedLease({ namespace, name: LEASE })).spec?.holderIdentity ?? '';
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  };

  const replica = (namespace: string, name: string, kubeconfig?: string) =>
    startController({
      namespace,
      ...(kubeconfig === undefined ? {} : { kubeconfig }),
      // Short enough for a quick takeover, long enough that a loaded machine does not miss renewals.
      args: ['--leader-elect', '--lease-duration', '6s', '--renew-deadline', '4s', '--retry-period', '500ms'],
      env: { POD_NAME: name, POD_NAMESPACE: namespace },
    });

  it('two replicas: one leads, the other is ready too, and takes over when the leader is killed', async () => {
    const namespace = uniqueName('e2e-ha');
    await createNamespace(c.kc, namespace);
    const git = await servers.start({ files: { 'cm.yaml': configMapYaml('ha', { v: '1' }) } });
    const replicas: Record<string, ControllerProcess> = {
      'replica-a': await replica(namespace, 'replica-a'),
      'replica-b': await replica(namespace, 'replica-b'),
    };
    const leader = await waitFor('a leader', async () => {
      const name = await holder(namespace);
      return name !== undefined && name in replicas ? name : undefined;
    });
    const follower = leader === 'replica-a' ? 'replica-b' : 'replica-a';
    for (const process of Object.values(replicas)) {
      await waitFor('/readyz', async () =>
        (await httpGet(process.port, '/readyz')).status === 200 ? true : undefined,
      );
    }

    await createApplySet(c, namespace, 'ha', { url: git.url });
    await waitForReady(c, namespace, 'ha', 'True');
    const reconciledBy = (name: string) =>
      replicas[name]!.logs.some(
        (line) => line['applyset'] === `${namespace}/ha` && line['msg'] === 'reconciled',
      );
    // Ready is written before the log line reaches us through the pipe: wait for the line itself.
    await waitFor('the reconciled log line', async () =>
      reconciledBy(leader) || reconciledBy(follower) ? true : undefined,
    );
    expect(reconciledBy(leader)).toBe(true);
    expect(reconciledBy(follower)).toBe(false);
    // applyset_leader tells them apart for the ApplySetNoLeader alert: 1 on the leader alone.
    expect(await metricsLines(replicas[leader]!)).toContain('applyset_leader 1');
    expect(await metricsLines(replicas[follower]!)).toContain('applyset_leader 0');

    await replicas[leader]!.stop('SIGKILL');
    await waitFor(
      'the follower to take over',
      async () => ((await holder(namespace)) === follower ? true : undefined),
      40_000,
    );
    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('ha', { v: '2' }) });
    await waitForAppliedCommit(c, namespace, 'ha', sha, 60_000);
    expect(await configMapData(c, namespace, 'ha')).toEqual({ v: '2' });
    expect(await metricsLines(replicas[follower]!)).toContain('applyset_leader 1');

    // SIGTERM: in-flight work finishes, the Lease is released for the next replica, exit code 0.
    expect(await replicas[follower]!.stop('SIGTERM')).toBe(0);
    expect(await holder(namespace)).toBe('');
  });

  it('serves /healthz and /metrics with the reconcile, object, Git and queue metrics', async () => {
    const namespace = uniqueName('e2e-metrics');
    await createNamespace(c.kc, namespace);
    const git = await servers.start({ files: { 'cm.yaml': configMapYaml('measured', { k: 'v' }) } });
    const controller = await startController({ namespace });
    expect((await httpGet(controller.port, '/healthz')).status).toBe(200);
    await createApplySet(c, namespace, 'measured', { url: git.url });
    await waitForReady(c, namespace, 'measured', 'True');
    const metrics = await waitFor('the metrics of a reconcile', async () => {
      const { body } = await httpGet(controller.port, '/metrics');
      return body.includes('applyset_reconciles_total{result="success"}') ? body : undefined;
    });
    expect(metrics).toMatch(/applyset_reconcile_duration_seconds_bucket\{le="[^"]+",result="success"\}/);
    expect(metrics).toMatch(/applyset_objects_total\{action="created"\} 1/);
    expect(metrics).toMatch(/applyset_git_fetch_duration_seconds_count\{result="success"\} \d+/);
    expect(metrics).toMatch(/applyset_queue_depth \d+/);
    expect(await controller.stop()).toBe(0);
  });

  it("the Helm chart's RBAC is enough: the controller, as the chart's ServiceAccount, reconciles an ApplySet", async () => {
    const { stdout: helmOut } = await execFileAsync('bash', [
      path.join(repoRoot, 'scripts/build-helm.sh'),
      '--check',
    ]);
    const helm = helmOut.trim().split('\n').pop() ?? '';
    const namespace = uniqueName('e2e-chart');
    const release = uniqueName('rel');
    await createNamespace(c.kc, namespace);
    const { stdout: rendered } = await execFileAsync(helm, [
      'template',
      release,
      path.join(repoRoot, 'deploy/applyset-controller'),
      '--namespace',
      namespace,
    ]);
    const rbacKinds = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
    const documents = yaml
      .loadAll(rendered)
      .filter(
        (doc): doc is { kind: string; metadata: { name: string } } =>
          typeof doc === 'object' && doc !== null && rbacKinds.has((doc as { kind: string }).kind),
      );
    expect(documents.map((doc) => doc.kind)).toEqual(
      expect.arrayContaining(['ServiceAccount', 'ClusterRole', 'Role']),
    );
    await kubectlApply(documents.map((doc) => JSON.stringify(doc)).join('\n'));
    const serviceAccount = documents.find((doc) => doc.kind === 'ServiceAccount') as {
      metadata: { name: string };
    };
    const kubeconfig = await kubeconfigForServiceAccount(namespace, serviceAccount.metadata.name);

    const git = await servers.start({ files: { 'cm.yaml': configMapYaml('charted', { k: 'v' }) } });
    const controller = await replica(namespace, 'chart-replica', kubeconfig);
    await createApplySet(c, namespace, 'charted', { url: git.url });
    const view = await waitForReady(c, namespace, 'charted', 'True');
    expect(view.metadata.finalizers).toContain('applyset.dev/finalizer');
    expect(await configMapData(c, namespace, 'charted')).toEqual({ k: 'v' });
    const events = await c.core.listNamespacedEvent({ namespace });
    expect(events.items.some((event) => event.reason === 'ReconciliationSucceeded')).toBe(true);
    // Deletion needs the finalizer rights too.
    await kubectl([
      '-n',
      namespace,
      'delete',
      'applysets.applyset.dev/charted',
      '--wait=true',
      '--timeout=30s',
    ]);
    expect(await configMapData(c, namespace, 'charted')).toBeUndefined();
    expect(await controller.stop()).toBe(0);
  });
});
