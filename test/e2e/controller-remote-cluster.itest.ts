import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  startController,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type Cluster,
  type ControllerProcess,
} from './e2e-kit.js';
import { createTenantAccount } from './locked-down-controller.js';

// Issue #26, remote clusters: an ApplySet on cluster A (the shared control plane) with
// spec.kubeConfig.secretRef is applied to cluster B (a second control plane this suite starts): its
// objects appear on B and not on A, prune happens on B, the ApplySet's account is impersonated on B,
// a kubeconfig with an exec plugin is refused without running it, and B going down stalls only the
// ApplySets that name it.

/** A Cluster (the kit's clients) over the kubeconfig file of another control plane. */
function clusterOf(kubeconfigPath: string): Cluster {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
  };
}

/** `account` of `namespace` on cluster `on`, may do `rules` in that namespace there (B has no admin role). */
async function grantOn(on: Cluster, namespace: string, account: string, rules: k8s.V1PolicyRule[]) {
  const rbac = on.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const name = `${account}-remote`;
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
}

const EVERYTHING: k8s.V1PolicyRule[] = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];

describe('an ApplySet applied to a remote cluster (spec.kubeConfig.secretRef)', () => {
  const a = cluster();
  const namespace = uniqueName('e2e-remote');
  let b: ControlPlane | undefined;
  let onB: Cluster;
  let git: GitTestServer;
  let controller: ControllerProcess;
  const marker = join(process.env['TMPDIR'] ?? '/tmp', `${namespace}-exec-ran`);

  const remoteSpec = (secret: string) => ({ kubeConfig: { secretRef: { name: secret } } });

  beforeAll(async () => {
    await installCrd();
    await createNamespace(a.kc, namespace);
    b = await startControlPlane({ ownerPid: process.pid });
    onB = clusterOf(b.kubeconfigPath);
    await createNamespace(onB.kc, namespace);
    // B's RBAC for the default account: every right in the namespace of the same name, nothing else.
    await grantOn(onB, namespace, 'applyset-deployer', EVERYTHING);
    git = await startGitServer({
      files: {
        'app/web.yaml': configMapYaml('web', { tier: 'front' }),
        'app/extra.yaml': configMapYaml('extra', { tier: 'spare' }),
        'limited/allowed.yaml': configMapYaml('allowed', { k: 'v' }),
        'limited/secret.yaml':
          'apiVersion: v1\nkind: Secret\nmetadata:\n  name: not-allowed\nstringData:\n  k: v\n',
        'local/here.yaml': configMapYaml('here', { rev: '1' }),
      },
    });
    // B's own admin kubeconfig: inline CA and token, as a kubeconfig Secret should be.
    await a.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'cluster-b' },
        stringData: { value: await readFile(b.kubeconfigPath, 'utf8') },
      },
    });
    // One worker: a remote ApplySet holding it would starve the local one, which must stay on time.
    controller = await startController({
      namespace,
      args: ['--allowed-remote-cluster-hosts', '127.0.0.1', '--concurrency', '1'],
    });
  }, 180_000);

  afterAll(async () => {
    await stopControllersAndGit(git);
    await b?.stop();
  });

  it('applies to B and not A, prunes on B what a commit removes, and corrects drift on B', async () => {
    await createApplySetWithSpec(
      a,
      namespace,
      'remote',
      { url: git.url, path: 'app' },
      remoteSpec('cluster-b'),
    );
    // The CRD keeps the field (an older CRD would drop it, and the set would go to A).
    const stored = (await getApplySet(a, namespace, 'remote')) as { spec?: { kubeConfig?: unknown } };
    expect(stored.spec?.kubeConfig).toEqual({ secretRef: { name: 'cluster-b' } });
    await waitForAppliedCommit(a, namespace, 'remote', await git.revParse('main'), 60_000);
    expect(await configMapData(onB, namespace, 'web')).toEqual({ tier: 'front' });
    expect(await configMapData(onB, namespace, 'extra')).toEqual({ tier: 'spare' });
    expect(await configMapData(a, namespace, 'web')).toBeUndefined();
    // The inventory is the ApplySet's, on A; the objects on B carry its uid as their owner.
    const parent = await a.custom.getNamespacedCustomObject({
      group: 'applyset.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'applysets',
      name: 'remote',
    });
    const web = await onB.core.readNamespacedConfigMap({ namespace, name: 'web' });
    expect(web.metadata?.annotations?.['kubectl.kubernetes.io/apply-owner']).toBe(
      (parent as { metadata: { uid: string } }).metadata.uid,
    );

    const removed = await git.deleteFiles(['app/extra.yaml']);
    await waitForAppliedCommit(a, namespace, 'remote', removed, 30_000);
    expect(await configMapData(onB, namespace, 'extra')).toBeUndefined();
    expect(await configMapData(onB, namespace, 'web')).toEqual({ tier: 'front' });

    // Drift on B is corrected on B, by the next run on the interval.
    await onB.core.patchNamespacedConfigMap(
      { namespace, name: 'web', body: { data: { tier: 'tampered' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor('the drift on B to be corrected', async () =>
      (await configMapData(onB, namespace, 'web'))?.['tier'] === 'front' ? true : undefined,
    );
  });

  it("impersonates the ApplySet's account on B, where B refuses what that account may not do", async () => {
    // The account exists on A (and may read the kubeconfig Secret there); on B it may write ConfigMaps only.
    await createTenantAccount(a, namespace, 'limited', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['cluster-b'], verbs: ['get'] },
    ]);
    await grantOn(onB, namespace, 'limited', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
    await createApplySetWithSpec(
      a,
      namespace,
      'limited',
      { url: git.url, path: 'limited', serviceAccountName: 'limited' },
      remoteSpec('cluster-b'),
    );
    const refused = await waitForReady(a, namespace, 'limited', 'False', (view) =>
      (condition(view, 'Ready')?.message ?? '').includes('forbidden'),
    );
    expect(condition(refused, 'Ready')?.message).toContain(`system:serviceaccount:${namespace}:limited`);
    // What the account may write reached B; what it may not is not there.
    expect(await configMapData(onB, namespace, 'allowed')).toEqual({ k: 'v' });
    expect(await configMapData(a, namespace, 'allowed')).toBeUndefined();
    await expect(onB.core.readNamespacedSecret({ namespace, name: 'not-allowed' })).rejects.toMatchObject({
      code: 404,
    });
  });

  it('refuses a kubeconfig with an exec plugin, and never runs it', async () => {
    const server = (b as ControlPlane).server;
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'b', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [
        {
          name: 'plugin',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: '/bin/sh',
              args: ['-c', `touch ${marker}`],
            },
          },
        },
      ],
      contexts: [{ name: 'b', context: { cluster: 'b', user: 'plugin' } }],
      'current-context': 'b',
    };
    await a.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'exec-kubeconfig' }, stringData: { value: JSON.stringify(kubeconfig) } },
    });
    await createApplySetWithSpec(
      a,
      namespace,
      'exec',
      { url: git.url, path: 'app' },
      remoteSpec('exec-kubeconfig'),
    );
    const stalled = await waitForReady(a, namespace, 'exec', 'False');
    expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'KubeConfigRefused' });
    expect(condition(stalled, 'Ready')?.message).toBe(
      `the kubeconfig of Secret ${namespace}/exec-kubeconfig, key value is refused: user "plugin" has an exec plugin (/bin/sh): plugins are refused unless the controller runs with --allow-remote-kubeconfig-exec`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('stalls only the ApplySets of B when B is down, naming B, while one on A applies a new commit on time', async () => {
    const down = b as ControlPlane;
    await createApplySet(a, namespace, 'local', { url: git.url, path: 'local' });
    await waitForAppliedCommit(a, namespace, 'local', await git.revParse('main'), 30_000);

    await down.stop();
    b = undefined;
    const unreachable = await waitForReady(
      a,
      namespace,
      'remote',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'RemoteClusterUnreachable',
    );
    expect(condition(unreachable, 'Ready')?.message).toContain(
      `remote cluster ${down.server} (the kubeconfig of Secret ${namespace}/cluster-b, key value) is unreachable`,
    );

    // The local ApplySet's interval is 5 s: a new commit is applied within two intervals and a margin,
    // though its one worker is shared with an ApplySet whose cluster is down.
    const committed = Date.now();
    const next = await git.writeFiles({ 'local/here.yaml': configMapYaml('here', { rev: '2' }) });
    await waitForAppliedCommit(a, namespace, 'local', next, 15_000);
    expect(await configMapData(a, namespace, 'here')).toEqual({ rev: '2' });
    expect(Date.now() - committed).toBeLessThan(15_000);
    expect(controller.child.exitCode).toBeNull();
  });

  it('deletes an ApplySet whose remote cluster is gone: it waits while the kubeconfig could still reach it, then lets it go', async () => {
    await a.custom.deleteNamespacedCustomObject({
      group: 'applyset.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'applysets',
      name: 'remote',
    });
    // B is down: the finalizer keeps the ApplySet, saying why, rather than dropping what it holds there.
    const failed = await waitFor('a PruneFailed event naming the remote cluster', async () => {
      const events = await a.core.listNamespacedEvent({ namespace });
      return events.items.find(
        (event) =>
          event.involvedObject.name === 'remote' &&
          event.reason === 'PruneFailed' &&
          (event.message ?? '').includes('is unreachable'),
      );
    });
    expect(failed.message).toContain(`the kubeconfig of Secret ${namespace}/cluster-b, key value`);
    expect(await getApplySet(a, namespace, 'remote')).toBeDefined();
    // Without its kubeconfig nothing can reach B any more: the ApplySet goes, leaving B's objects.
    await a.core.deleteNamespacedSecret({ namespace, name: 'cluster-b' });
    await waitFor('the ApplySet to be gone', async () =>
      (await getApplySet(a, namespace, 'remote')) === undefined ? true : undefined,
    );
    const events = await a.core.listNamespacedEvent({ namespace });
    expect(
      events.items.some(
        (event) => event.reason === 'RemoteChildrenLeft' && event.involvedObject.name === 'remote',
      ),
    ).toBe(true);
  });
});
