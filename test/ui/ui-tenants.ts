// The people of the web view's access tests, on the real API server: two tenant namespaces, a viewer
// whose token may get ApplySets in the first only, one with no rights at all, and an account that may
// create TokenReviews and SubjectAccessReviews (bound to system:auth-delegator, as the chart binds the
// controller) to stand for the controller in tests that do not start one.
import * as k8s from '@kubernetes/client-node';
import { kubectl } from '../e2e/e2e-kit.js';
import {
  adminKubeConfig,
  createNamespace,
  kubeconfigForServiceAccount,
  uniqueName,
} from '../harness/test-cluster.js';

export interface UiTenants {
  readonly teamA: string;
  readonly teamB: string;
  /** A token of `viewer` in teamA, who may get, list and watch ApplySets in teamA and nothing else. */
  readonly viewerToken: string;
  readonly viewerUser: string;
  /** A token of `viewer` in teamB, who may read there alone. */
  readonly teamBViewerToken: string;
  /** A token of an account with no rights anywhere. */
  readonly strangerToken: string;
}

/** A token for the ServiceAccount `namespace/name` from the TokenRequest API (created if missing). */
export async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  const core = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  try {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
  const answer = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = answer.status?.token;
  if (token === undefined) throw new Error(`no token issued for ${namespace}/${name}`);
  return token;
}

export async function createUiTenants(): Promise<UiTenants> {
  const teamA = uniqueName('team-a');
  const teamB = uniqueName('team-b');
  const kc = adminKubeConfig();
  await createNamespace(kc, teamA);
  await createNamespace(kc, teamB);
  return {
    teamA,
    teamB,
    viewerToken: await viewerIn(teamA),
    viewerUser: `system:serviceaccount:${teamA}:viewer`,
    teamBViewerToken: await viewerIn(teamB),
    strangerToken: await serviceAccountToken(teamB, 'stranger'),
  };
}

/** A token of the account `viewer` in `namespace`, bound there to a Role that reads ApplySets. */
export async function viewerIn(namespace: string): Promise<string> {
  const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
  const rules = [{ apiGroups: ['applyset.dev'], resources: ['applysets'], verbs: ['get', 'list', 'watch'] }];
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'viewer' }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'viewer' },
      subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace }],
    },
  });
  return serviceAccountToken(namespace, 'viewer');
}

/**
 * An account in `namespace` that may create TokenReviews and SubjectAccessReviews and nothing else:
 * the rights the chart gives the controller when the web view is on. Returns a kubeconfig acting as it
 * and a cleanup of the ClusterRoleBinding.
 */
export async function reviewerAccount(
  namespace: string,
): Promise<{ readonly kubeconfig: string; cleanup(): Promise<void> }> {
  const name = uniqueName('ui-reviewer');
  const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: 'reviewer', namespace }],
    },
  });
  return {
    kubeconfig: await kubeconfigForServiceAccount(namespace, 'reviewer'),
    cleanup: async () => {
      await kubectl(['delete', 'clusterrolebinding', name, '--ignore-not-found']);
    },
  };
}
