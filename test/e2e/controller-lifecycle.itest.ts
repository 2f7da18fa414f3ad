import * as k8s from '@kubernetes/client-node';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  kubectl,
  waitFor,
  waitForReady,
} from './e2e-kit.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';

// Deleting an ApplySet (its deletionPolicy decides the children's fate) and impersonating its
// ServiceAccount (the controller cannot be used to do what that account may not).

describe('the controller on deletion and with a ServiceAccount', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-life');
  const other = uniqueName('e2e-other');
  const servers = new GitServerPool();

  const serve = (files: Record<string, string>) => servers.start({ files });

  beforeAll(async () => {
    await startControllerInNamespace(c, namespace);
    await createNamespace(c.kc, other);
  });

  afterAll(() => stopControllersAndGit(servers));

  it.each([
    ['Delete', undefined],
    ['Orphan', { k: 'v' }],
  ] as const)(
    'deletionPolicy %s: the children are handled before the ApplySet goes',
    async (policy, expected) => {
      const name = `gone-${policy.toLowerCase()}`;
      const git = await serve({ 'cm.yaml': configMapYaml(`${name}-child`, { k: 'v' }) });
      await createApplySet(c, namespace, name, { url: git.url, deletionPolicy: policy });
      await waitForReady(c, namespace, name, 'True');
      expect(await configMapData(c, namespace, `${name}-child`)).toEqual({ k: 'v' });

      await kubectl(['-n', namespace, 'delete', `applysets.applyset.dev/${name}`, '--wait=false']);
      await waitFor(`ApplySet ${name} to be gone`, async () =>
        (await getApplySet(c, namespace, name)) === undefined ? true : undefined,
      );
      expect(await configMapData(c, namespace, `${name}-child`)).toEqual(expected);
    },
  );

  it('an ApplySet whose ServiceAccount has no rights in another namespace cannot create objects there', async () => {
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'deployer' } } });
    // The tenant may do anything in its own namespace, ApplySets included, and nothing elsewhere.
    await rbac.createNamespacedRole({
      namespace,
      body: { metadata: { name: 'tenant' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'tenant' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace }],
      },
    });
    const git = await serve({
      'mine.yaml': configMapYaml('tenant-own', { k: 'v' }),
      'theirs.yaml': configMapYaml('tenant-escape', { k: 'v' }, other),
    });
    await createApplySet(c, namespace, 'tenant', { url: git.url, serviceAccountName: 'deployer' });
    const view = await waitForReady(c, namespace, 'tenant', 'False');
    expect(condition(view, 'Ready')?.message).toContain(`system:serviceaccount:${namespace}:deployer`);
    expect(condition(view, 'Ready')?.message).toMatch(/forbidden/i);
    expect(await configMapData(c, other, 'tenant-escape')).toBeUndefined();

    // Without the escaping object, the same ServiceAccount may apply its own namespace.
    await git.deleteFiles(['theirs.yaml']);
    await waitForReady(c, namespace, 'tenant', 'True', undefined, 20_000);
    expect(await configMapData(c, namespace, 'tenant-own')).toEqual({ k: 'v' });
  });
});
