import * as k8s from '@kubernetes/client-node';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  httpGet,
  installCrd,
  patchApplySet,
  startController,
  waitForAppliedCommit,
  type Cluster,
  type ControllerProcess,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';

// Issue #14, what an identity costs: ApplySets applied as ServiceAccounts of their own share the
// controller's discovery and OpenAPI, which do not depend on who asks. Counted by the controller's
// own applyset_kube_schema_requests_total{cluster="local",document} (the API server's counters are
// shared with the other test files running at the same time); the controller watches only this
// test's namespace.

async function schemaRequests(
  controller: ControllerProcess,
): Promise<{ discovery: number; openapi: number }> {
  const { body } = await httpGet(controller.port, '/metrics');
  const counts = { discovery: 0, openapi: 0 };
  for (const line of body.split('\n')) {
    const match =
      /^applyset_kube_schema_requests_total\{cluster="local",document="(discovery|openapi)"\} (\d+)/.exec(
        line,
      );
    if (match?.[1] === 'discovery' || match?.[1] === 'openapi') counts[match[1]] = Number(match[2]);
  }
  return counts;
}

/** A ServiceAccount that may write ConfigMaps and the inventory on ApplySets of its namespace. */
async function createDeployer(c: Cluster, namespace: string, account: string): Promise<void> {
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: account },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
}

describe('ApplySets under different ServiceAccounts', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-ids');
  const tenants = 6;
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'deployer' },
        rules: [
          {
            apiGroups: [''],
            resources: ['configmaps'],
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
          },
        ],
      },
    });
    const files: Record<string, string> = {};
    for (let i = 0; i < tenants; i += 1) {
      await createDeployer(c, namespace, `deployer-${i}`);
      for (const n of ['a', 'b']) files[`set-${i}/${n}.yaml`] = configMapYaml(`t${i}-${n}`, { v: '1' });
    }
    git = await startGitServer({ files });
    controller = await startController({ namespace });
  });

  afterAll(() => stopControllersAndGit(git));

  it('read discovery and OpenAPI once for all of them, not once per account', async () => {
    const before = await schemaRequests(controller);
    const sha = await git.revParse('main');
    const names = Array.from({ length: tenants }, (_, i) => `tenant-${i}`);
    await Promise.all(
      names.map((name, i) =>
        createApplySet(c, namespace, name, {
          url: git.url,
          path: `set-${i}`,
          interval: '1h',
          serviceAccountName: `deployer-${i}`,
        }),
      ),
    );
    for (const name of names) await waitForAppliedCommit(c, namespace, name, sha, 120_000);
    // A change to every set: patches now, which need the patch metadata from OpenAPI (creates do not).
    const changed: Record<string, string> = {};
    for (let i = 0; i < tenants; i += 1) changed[`set-${i}/a.yaml`] = configMapYaml(`t${i}-a`, { v: '2' });
    const next = await git.writeFiles(changed);
    await Promise.all(
      names.map((name) =>
        patchApplySet(namespace, name, {
          metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'change' } },
        }),
      ),
    );
    for (const name of names) await waitForAppliedCommit(c, namespace, name, next, 120_000);
    for (let i = 0; i < tenants; i += 1) {
      expect(await configMapData(c, namespace, `t${i}-a`)).toEqual({ v: '2' });
    }

    const fetched = await schemaRequests(controller);
    // ConfigMaps need `GET /api/v1`, and the OpenAPI v3 index and its `api/v1` document; the
    // ApplySet parent may need `/apis/applyset.dev/v1alpha1`. Per account, that would be 6 and 12.
    expect(fetched.openapi - before.openapi).toBeGreaterThanOrEqual(1);
    expect(fetched.openapi - before.openapi).toBeLessThanOrEqual(2);
    expect(fetched.discovery - before.discovery).toBeGreaterThanOrEqual(1);
    expect(fetched.discovery - before.discovery).toBeLessThanOrEqual(2);
  });
});
