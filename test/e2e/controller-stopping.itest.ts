import * as k8s from '@kubernetes/client-node';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { createNamespace, kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  startController,
  waitFor,
  waitForReady,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';
import { startSlowAdmissionWebhook } from '../harness/slow-admission-webhook.js';

// How the controller stops: when the API server refuses to renew its Lease while the process lives on,
// it stops reconciling and exits before another replica may take the Lease; on SIGTERM it lets the
// reconcile in flight finish within --shutdown-grace and releases the Lease, and past the grace it
// exits anyway.

const LEASE = 'applyset-controller-leader';
// Short enough for a quick test, long enough that a loaded machine does not miss renewals.
const ELECTION = [
  '--leader-elect',
  '--lease-duration',
  '6s',
  '--renew-deadline',
  '4s',
  '--retry-period',
  '500ms',
];

describe('the controller stopping', () => {
  const c = cluster();
  const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const servers = new GitServerPool();

  beforeAll(() => installCrd());
  afterAll(() => stopControllersAndGit(servers));

  const lease = (namespace: string) => coordination.readNamespacedLease({ namespace, name: LEASE });
  const holder = async (namespace: string) => {
    try {
      return (await lease(namespace)).spec?.holderIdentity ?? '';
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  };

  /** A controller leading in its own namespace, which it watches; resolves once it holds the Lease. */
  const leader = async (namespace: string, name: string, options: Parameters<typeof startController>[0]) => {
    const controller = await startController({
      namespace,
      ...options,
      args: [...ELECTION, ...(options.args ?? [])],
      env: { POD_NAME: name, POD_NAMESPACE: namespace },
    });
    await waitFor('the Lease', async () => ((await holder(namespace)) === name ? true : undefined));
    return controller;
  };

  /** `rules` in `namespace` for the ServiceAccount `account`, as a Role and binding named `name`. */
  const grant = async (namespace: string, account: string, name: string, rules: k8s.V1PolicyRule[]) => {
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
      },
    });
  };

  it('stops reconciling and exits before the Lease expires when the API server refuses its renewals', async () => {
    const namespace = uniqueName('e2e-lease-lost');
    await createNamespace(c.kc, namespace);
    // The controller's own account: its namespace's objects, and the Lease through a binding of its own
    // that the test takes away while the process runs on.
    const kubeconfig = await kubeconfigForServiceAccount(namespace, 'controller');
    const everything = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    await grant(namespace, 'controller', 'work', [
      { apiGroups: ['', 'applyset.dev', 'events.k8s.io'], resources: ['*'], verbs: everything },
    ]);
    await grant(namespace, 'controller', 'lease', [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: everything },
    ]);
    const git = await servers.start({ files: { 'cm.yaml': configMapYaml('leased', { k: 'v' }) } });
    const controller = await leader(namespace, 'replica-a', { kubeconfig, args: ['--apply-as-controller'] });
    await createApplySet(c, namespace, 'leased', { url: git.url, interval: '1s' });
    await waitForReady(c, namespace, 'leased', 'True');

    await rbac.deleteNamespacedRoleBinding({ namespace, name: 'lease' });
    let exit: { code: number | null; at: number } | undefined;
    void controller.exited.then((code) => (exit = { code, at: Date.now() }));
    const { code, at } = await waitFor('the controller to exit', async () => exit, 30_000);

    // The Lease still names it (it may no longer write it): others take it once it expires, which is
    // after the controller was gone and after its last reconcile.
    const spec = (await lease(namespace)).spec;
    expect(spec?.holderIdentity).toBe('replica-a');
    const expires = new Date(String(spec?.renewTime)).getTime() + (spec?.leaseDurationSeconds ?? 0) * 1000;
    expect(at).toBeLessThan(expires);
    // Not 0: a Deployment's pod restarts it, and it campaigns again as a follower.
    expect(code).toBe(ExitCode.failure);
    const lost = controller.logs.findIndex((line) => String(line['msg']).startsWith('lost the leadership'));
    expect(lost).toBeGreaterThanOrEqual(0);
    // Nothing reconciled once it knew.
    expect(controller.logs.slice(lost).filter((line) => line['msg'] === 'reconciled')).toEqual([]);
    const reconciles = controller.logs.filter(
      (line) => line['applyset'] === `${namespace}/leased` && line['msg'] === 'reconciled',
    );
    expect(reconciles.length).toBeGreaterThan(0);
    for (const line of reconciles) expect(Date.parse(String(line['time']))).toBeLessThan(expires);
  });

  it('on SIGTERM, finishes the reconcile in flight within the grace and releases the Lease', async () => {
    const namespace = uniqueName('e2e-grace');
    await createNamespace(c.kc, namespace);
    const git = await servers.start({ files: { 'cm.yaml': configMapYaml('graceful', { k: 'v' }) } });
    const controller = await leader(namespace, 'replica-a', { args: ['--shutdown-grace', '30s'] });
    const held = git.hold();
    await createApplySet(c, namespace, 'graceful', { url: git.url });
    await waitFor('the fetch in flight', async () => (held.waiting() > 0 ? true : undefined));

    const stopped = controller.stop('SIGTERM');
    await waitFor('the shutdown to begin', async () =>
      controller.logs.some((line) => line['msg'] === 'shutdown requested') ? true : undefined,
    );
    held.release();
    expect(await stopped).toBe(0);
    expect(await configMapData(c, namespace, 'graceful')).toEqual({ k: 'v' });
    expect(await holder(namespace)).toBe('');
  });

  it('on SIGTERM, exits once the grace is over though a write is still in flight', async () => {
    const namespace = uniqueName('e2e-grace-over');
    await createNamespace(c.kc, namespace);
    // Holds the ConfigMap's create for 30 s: far past the grace, so only the grace can end the wait.
    const webhook = await startSlowAdmissionWebhook({ namespace, timeoutSeconds: 30 });
    try {
      const git = await servers.start({ files: { 'cm.yaml': configMapYaml('stuck', { k: 'v' }) } });
      const controller = await leader(namespace, 'replica-a', { args: ['--shutdown-grace', '2s'] });
      await createApplySet(c, namespace, 'stuck', { url: git.url });
      await waitFor('the write in flight', async () => (webhook.inFlight() > 0 ? true : undefined));

      const signalled = Date.now();
      const code = await controller.stop('SIGTERM');
      const took = Date.now() - signalled;
      expect(took).toBeGreaterThanOrEqual(2_000);
      expect(took).toBeLessThan(10_000);
      expect(code).toBe(0);
      expect(await holder(namespace)).toBe('');
    } finally {
      await webhook.close();
    }
  });
});
