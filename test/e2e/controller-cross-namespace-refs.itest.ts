import type { GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  startController,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { DEFAULT_DEPLOYER } from './default-deployer.js';
import { GitServerPool } from './git-server-pool.js';
import { grantAccountIn } from './locked-down-controller.js';

// Issue #9.2: spec.source.secretRef.namespace. The controller reads a credentials Secret with its own
// rights, so a Secret of another namespace would be the controller's to lend, not the ApplySet author's.
// Only a namespace the operator listed in --allow-secret-refs-from may be named; any other is refused
// before anything is read or fetched.

const PASSWORD = 'cross-namespace-password-6d1f';
const credentials = { username: 'deploy', password: PASSWORD };

describe('the controller and secretRefs to other namespaces', () => {
  const c = cluster();
  const team = uniqueName('e2e-xns-team');
  const shared = uniqueName('e2e-xns-shared');
  const other = uniqueName('e2e-xns-other');
  const servers = new GitServerPool();

  const serve = (name: string): Promise<GitTestServer> =>
    servers.start({ files: { 'cm.yaml': configMapYaml(name, { k: 'v' }) }, auth: credentials });

  /** A credentials Secret for 127.0.0.1 in `namespace`: right credentials, right host. */
  const createSecret = async (namespace: string, name: string) => {
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: credentials,
      },
    });
  };

  beforeAll(async () => {
    await installCrd();
    for (const namespace of [team, shared, other]) await createNamespace(c.kc, namespace);
    await createSecret(shared, 'git-credentials');
    await createSecret(other, 'git-credentials');
    await startController({
      namespace: team,
      args: ['--allow-cross-namespace-refs', '--allow-secret-refs-from', shared],
    });
    // The Secret is read as the team's account (issue #23), which the shared namespace lets read it by
    // name; the other namespace grants nothing, and the controller refuses it before asking anyway.
    await grantAccountIn(c, { namespace: team, name: DEFAULT_DEPLOYER }, shared, [
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['git-credentials'], verbs: ['get'] },
    ]);
  });

  afterAll(() => stopControllersAndGit(servers));

  it('uses a Secret of a namespace listed in --allow-secret-refs-from', async () => {
    const git = await serve('with-shared-credentials');
    await createApplySet(c, team, 'shared-creds', {
      url: git.url,
      secretName: 'git-credentials',
      secretNamespace: shared,
    });
    await waitForReady(c, team, 'shared-creds', 'True');
    expect(await configMapData(c, team, 'with-shared-credentials')).toEqual({ k: 'v' });
    expect(git.requests.some((request) => request.user === 'deploy')).toBe(true);
  });

  it('refuses a Secret of a namespace not listed: stalled, nothing read from Git, nothing applied', async () => {
    const git = await serve('with-borrowed-credentials');
    await createApplySet(c, team, 'borrowed-creds', {
      url: git.url,
      secretName: 'git-credentials',
      secretNamespace: other,
    });
    const view: ApplySetView = await waitForReady(
      c,
      team,
      'borrowed-creds',
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(view, 'Stalled')?.reason).toBe('CrossNamespaceRefRefused');
    expect(condition(view, 'Ready')?.message).toBe(
      `spec.source.secretRef names Secret ${other}/git-credentials of another namespace, and the controller trusts no Secret of namespace ${other} (--allow-secret-refs-from, chart tenancy.allowSecretRefsFrom); nothing was fetched or applied`,
    );
    expect(git.requests).toEqual([]);
    expect(await configMapData(c, team, 'with-borrowed-credentials')).toBeUndefined();
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
  });

  it('refuses at admission a secretRef namespace that is no namespace name', async () => {
    const error = await createApplySet(c, team, 'bad-ref', {
      url: 'http://127.0.0.1:1/repo.git',
      secretName: 'git-credentials',
      secretNamespace: '../kube-system',
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 422 });
    expect(String((error as { body?: unknown }).body)).toContain('spec.source.secretRef.namespace');
  });
});
