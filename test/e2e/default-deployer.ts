// The account the controller applies ApplySets as by default (issue #23): `applyset-deployer` of the
// ApplySet's own namespace. The e2e suites run the controller with its defaults, so each namespace a
// suite's controller watches gets that account with every right in that namespace (what a team owning
// the namespace would grant), and nothing outside it. A Role of its own rather than a binding to the
// built-in `admin`, so that what a suite's account may do is written here, whatever the built-in roles
// aggregate. Suites that apply cluster-scoped objects grant exactly those with grantClusterRules.
import * as k8s from '@kubernetes/client-node';
import { adminKubeConfig } from '../harness/test-cluster.js';

export const DEFAULT_DEPLOYER = 'applyset-deployer';

/** Everything in the namespace, the ApplySets included (the inventory is written as the account). */
const NAMESPACE_RULE: k8s.V1PolicyRule = { apiGroups: ['*'], resources: ['*'], verbs: ['*'] };

/** Creates `body`, leaving one that already exists as it is (a suite may start two controllers). */
async function createOnce(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}

/**
 * `account` (applyset-deployer by default) in `namespace`, with every right in the namespace.
 * Idempotent.
 */
export async function provisionDeployer(namespace: string, account = DEFAULT_DEPLOYER): Promise<void> {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace }];
  await createOnce(() =>
    core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } }),
  );
  const name = `${account}-namespace`;
  await createOnce(() =>
    rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: [NAMESPACE_RULE] } }),
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
