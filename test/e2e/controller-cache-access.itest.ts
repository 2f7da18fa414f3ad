import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  GROUP,
  installCrd,
  PLURAL,
  startController,
  stopAllControllers,
  VERSION,
  waitForReady,
  type ApplySetOptions,
} from './e2e-kit.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';

// Issue #23, finding 2: one tenant read another's private repository through the shared Git cache, by
// naming in ref.commit the sha it saw in the other's status. Two tenants of one controller, each in its
// namespace and applied as its own ServiceAccount: A with a Secret for the private repository, B with
// none, on the same URL. B stalls on the server's 401, the server's log shows B's unauthenticated
// request, and nothing of A's reaches B's namespace.

const SELECTOR_KEY = 'e2e.applyset.dev/suite';
const tenantA = { username: 'tenant-a', password: 'pr1vate-t0ken' };

describe('the Git cache between tenants', () => {
  const c = cluster();
  const suite = uniqueName('cache-access');
  const namespaceA = uniqueName('e2e-tenant-a');
  const namespaceB = uniqueName('e2e-tenant-b');
  let git: GitTestServer;

  const create = async (namespace: string, name: string, options: ApplySetOptions, ref: object) => {
    const body = applySetBody(namespace, name, options);
    const spec = body['spec'] as { source: object };
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: {
        ...body,
        metadata: { ...(body['metadata'] as object), labels: { [SELECTOR_KEY]: suite } },
        spec: { ...spec, source: { ...spec.source, ref } },
      },
    });
  };

  beforeAll(async () => {
    await installCrd();
    git = await startGitServer({
      files: { 'cm.yaml': configMapYaml('tenant-a-only', { secret: 'of-a' }) },
      auth: tenantA,
    });
    for (const namespace of [namespaceA, namespaceB]) {
      await createNamespace(c.kc, namespace);
      // The Git credentials Secret is read as the account: A's may get it, by name.
      await createTenantAccount(c, namespace, 'deployer', [
        coreRule('configmaps'),
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['git'], verbs: ['get'] },
      ]);
    }
    await c.core.createNamespacedSecret({
      namespace: namespaceA,
      body: {
        metadata: { name: 'git', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: tenantA,
      },
    });
    // Both namespaces, nothing else of the shared cluster: the suite's label picks its ApplySets.
    await startController({
      args: [
        '--watch-label-selector',
        `${SELECTOR_KEY}=${suite}`,
        '--allowed-source-hosts',
        '127.0.0.1',
        '--require-secret-source-hosts',
        '--no-cross-namespace-refs',
      ],
    });
  });

  afterAll(async () => {
    await stopAllControllers();
    await git.close();
  });

  it('gives a tenant without credentials nothing of a private commit another tenant fetched', async () => {
    const sha = await git.revParse('main');
    const options = { url: git.url, serviceAccountName: 'deployer', interval: '1h' };
    await create(namespaceA, 'app', { ...options, secretName: 'git' }, { commit: sha });
    const a = await waitForReady(c, namespaceA, 'app', 'True');
    expect(a.status?.lastAppliedRevision).toBe(`sha1:${sha}`);
    expect(await configMapData(c, namespaceA, 'tenant-a-only')).toEqual({ secret: 'of-a' });

    // B copies the URL and the sha from A's status; it has no Secret.
    const before = git.requests.length;
    await create(namespaceB, 'copy', options, { commit: sha });
    const b = await waitForReady(
      c,
      namespaceB,
      'copy',
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(b, 'Ready')).toMatchObject({
      reason: 'AuthenticationFailed',
      message: `authentication failed for ${git.url} (HTTP 401): the repository needs credentials: set spec.source.secretRef`,
    });
    expect(b.status?.lastAppliedRevision).toBeUndefined();
    expect(git.requests.slice(before)).toContainEqual(
      expect.objectContaining({ status: 401, authorization: false, user: undefined }),
    );
    expect(git.requests.slice(before).every((request) => request.status === 401)).toBe(true);
    expect(await configMapData(c, namespaceB, 'tenant-a-only')).toBeUndefined();
  });

  it.each([
    ['a branch', 'by-branch', { branch: 'main' }],
    ['a tag', 'by-tag', { tag: 'v1' }],
  ])('gives it nothing by %s either', async (_, name, ref) => {
    await git.setTag('v1', 'main');
    const options = { url: git.url, serviceAccountName: 'deployer', interval: '1h' };
    // A's commit is in the cache (the first test); a branch or a tag always asks the server, as B's.
    const before = git.requests.length;
    await create(namespaceB, name, options, ref);
    const b = await waitForReady(
      c,
      namespaceB,
      name,
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(b, 'Ready')?.reason).toBe('AuthenticationFailed');
    const asked = git.requests.slice(before).filter((request) => request.user === undefined);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((request) => request.status === 401)).toBe(true);
    expect(await configMapData(c, namespaceB, 'tenant-a-only')).toBeUndefined();
  });

  it('cannot even name a short sha: the API server refuses it', async () => {
    const sha = await git.revParse('main');
    const error: unknown = await create(
      namespaceB,
      'short',
      { url: git.url, serviceAccountName: 'deployer' },
      { commit: sha.slice(0, 7) },
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 422 });
  });
});
