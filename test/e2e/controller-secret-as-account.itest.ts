import * as k8s from '@kubernetes/client-node';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import {
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Issue #23: the Git credentials Secret of an ApplySet is read as the account the ApplySet is applied
// as, never with the controller's rights. A tenant who may create ApplySets but not read a Secret of
// its namespace cannot make the controller send that Secret's token to a server of the tenant's choice.
// The controller runs with the chart's locked-down RBAC, which grants it no Secret at all.

describe("the Git credentials Secret, read as the ApplySet's account", () => {
  const c = cluster();
  const namespace = uniqueName('e2e-secret-as');
  let git: GitTestServer | undefined;
  let controller: LockedDownController | undefined;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    git = await startGitServer({
      auth: { username: 'deploy', password: 'TokenOfTeamA' },
      files: { 'app.yaml': configMapYaml('private-config', { k: 'private' }) },
    });
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'git-token', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { username: 'deploy', password: 'TokenOfTeamA' },
      },
    });
    // The chart impersonates by name only: the suite's account is listed.
    controller = await startLockedDownController({
      namespace,
      values: { 'tenancy.serviceAccountNames[0]': 'no-secrets' },
    });
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    await controller?.cleanup();
  });

  it('stalls, sending nothing, while the account may not get the Secret; fetches with it once it may', async () => {
    const server = git as GitTestServer;
    await createTenantAccount(c, namespace, 'no-secrets', [coreRule('configmaps')]);
    await createApplySet(c, namespace, 'private', {
      url: server.url,
      secretName: 'git-token',
      serviceAccountName: 'no-secrets',
    });

    const refused = await waitForReady(
      c,
      namespace,
      'private',
      'False',
      (view) => view.status?.conditions?.some((cond) => cond.reason === 'SecretNotReadable') === true,
    );
    expect(condition(refused, 'Stalled')).toMatchObject({ status: 'True', reason: 'SecretNotReadable' });
    expect(condition(refused, 'Ready')?.message).toContain(
      `the ApplySet's ServiceAccount ${namespace}/no-secrets may not get Secret ${namespace}/git-token`,
    );
    // The Git server never saw the token: no request at all, and none with an Authorization header.
    expect(server.requests.filter((request) => request.authorization)).toEqual([]);
    expect(await configMapData(c, namespace, 'private-config')).toBeUndefined();

    // The Role the docs recommend for a private source: get on that one Secret, by name.
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'read-git-token' },
        rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['git-token'], verbs: ['get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'read-git-token' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-git-token' },
        subjects: [{ kind: 'ServiceAccount', name: 'no-secrets', namespace }],
      },
    });
    await waitForAppliedCommit(c, namespace, 'private', await server.revParse('main'), 30_000);
    expect(await configMapData(c, namespace, 'private-config')).toEqual({ k: 'private' });
    expect(server.requests.some((request) => request.authorization && request.user === 'deploy')).toBe(true);
  });
});
