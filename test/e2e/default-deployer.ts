// The account the controller applies ApplySets as by default (issue #23): `applyset-deployer` of the
// ApplySet's own namespace. The e2e suites run the controller with its defaults, so each namespace a
// suite's controller watches gets that account, bound to the built-in `admin` ClusterRole there (what a
// team owning the namespace would grant), plus what the account needs on its own ApplySets. Suites
// that apply cluster-scoped objects grant exactly those with grantClusterRules.
import * as k8s from '@kubernetes/client-node';
import { adminKubeConfig } from '../harness/test-cluster.js';

export const DEFAULT_DEPLOYER = 'applyset-deployer';

/** The inventory is written as the account: it needs get and patch on the ApplySets of its namespace. */
const INVENTORY_RULE: k8s.V1PolicyRule = {
  apiGroups: ['applyset.dev'],
  resources: ['applysets'],
  verbs: ['get', 'patch', 'update'],
};

/** Creates `body`, leaving one that already exists as it is (a suite may start two controllers). */
async function createOnce(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}

/**
 * `account` (applyset-deployer by default) in `namespace`, with `admin` on the namespace and the
 * inventory rule. Idempotent.
 */
export async function provisionDeployer(namespace: string, account = DEFAULT_DEPLOYER): Promise<void> {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace }];
  await createOnce(() =>
    core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } }),
  );
  await createOnce(() =>
    rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: `${account}-admin` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects,
      },
    }),
  );
  const name = `${account}-inventory`;
  await createOnce(() =>
    rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: [INVENTORY_RULE] } }),
  );
  await createOnce(() =>
    rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects,
      },
    }),
  );
}

/**
 * Grants the deployer of `namespace` `rules` on the whole cluster, for a suite whose repository holds
 * cluster-scoped objects (or objects of other namespaces). Returns the cleanup: the ClusterRole and its
 * binding are cluster-scoped and outlive the namespace.
 */
export async function grantClusterRules(
  namespace: string,
  rules: readonly k8s.V1PolicyRule[],
  account = DEFAULT_DEPLOYER,
): Promise<() => Promise<void>> {
  const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
  const name = `${namespace}-${account}`;
  await rbac.createClusterRole({ body: { metadata: { name }, rules: [...rules] } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
  return async () => {
    await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    await rbac.deleteClusterRole({ name }).catch(() => undefined);
  };
}
