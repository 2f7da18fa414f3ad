import type { GitServerOptions } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { cluster, condition, configMapData, configMapYaml, createApplySet, waitForReady } from './e2e-kit.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';

// What a user sees when something is wrong: the status says what and where, and nothing applied before
// is deleted.

/** The harness's Git servers are on loopback. */
const SOURCE_HOSTS = { 'applyset.dev/source-hosts': '127.0.0.1' };

describe('the controller when something is wrong', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-fail');
  const servers = new GitServerPool();

  const serve = (options: GitServerOptions) => servers.start(options);

  beforeAll(async () => {
    await startControllerInNamespace(c, namespace);
  });

  afterAll(() => stopControllersAndGit(servers));

  it('a commit with invalid YAML stalls, names the file, and deletes nothing', async () => {
    const git = await serve({
      files: { 'a.yaml': configMapYaml('bad-a', { k: 'v' }), 'b.yaml': configMapYaml('bad-b', { k: 'v' }) },
    });
    await createApplySet(c, namespace, 'bad-yaml', { url: git.url });
    await waitForReady(c, namespace, 'bad-yaml', 'True');

    await git.deleteFiles(['b.yaml']);
    const sha = await git.writeFiles({
      'broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n',
    });
    const view = await waitForReady(
      c,
      namespace,
      'bad-yaml',
      'False',
      (v) => v.status?.lastAttemptedRevision === `main@sha1:${sha}`,
    );
    expect(condition(view, 'Stalled')).toMatchObject({ status: 'True', reason: 'InvalidManifests' });
    expect(condition(view, 'Ready')?.message).toContain('broken.yaml');
    expect(view.status?.errors?.items.map((item) => item.object)).toContain('broken.yaml');
    expect(view.status?.lastAppliedRevision).not.toBe(`main@sha1:${sha}`);
    // b.yaml left Git in the same commit, but a refused commit prunes nothing.
    expect(await configMapData(c, namespace, 'bad-a')).toEqual({ k: 'v' });
    expect(await configMapData(c, namespace, 'bad-b')).toEqual({ k: 'v' });
  });

  it('an unreachable repository sets Ready=False, deletes nothing, and recovers', async () => {
    const git = await serve({ files: { 'cm.yaml': configMapYaml('offline', { k: 'v' }) } });
    await createApplySet(c, namespace, 'offline', { url: git.url });
    await waitForReady(c, namespace, 'offline', 'True');

    await git.goOffline();
    const view = await waitForReady(c, namespace, 'offline', 'False', undefined, 20_000);
    expect(condition(view, 'Ready')).toMatchObject({ reason: 'GitUnreachable' });
    expect(condition(view, 'Ready')?.message).toContain('unreachable');
    expect(condition(view, 'Stalled')?.status).toBe('False');
    expect(await configMapData(c, namespace, 'offline')).toEqual({ k: 'v' });

    await git.goOnline();
    await waitForReady(c, namespace, 'offline', 'True', undefined, 20_000);
  });

  it('wrong credentials give a clear message; fixing the Secret reconciles at once', async () => {
    const git = await serve({
      files: { 'cm.yaml': configMapYaml('private', { k: 'v' }) },
      auth: { username: 'deploy', password: 's3cret-pass' },
    });
    await c.core.createNamespacedSecret({
      namespace,
      // A credentials Secret must name the hosts it is for (the controller's default).
      body: {
        metadata: { name: 'git-creds', annotations: SOURCE_HOSTS },
        stringData: { username: 'deploy', password: 'wrong-pass' },
      },
    });
    await createApplySet(c, namespace, 'private', { url: git.url, secretName: 'git-creds', interval: '10m' });
    const view = await waitForReady(c, namespace, 'private', 'False');
    expect(condition(view, 'Ready')?.reason).toBe('AuthenticationFailed');
    expect(condition(view, 'Ready')?.message).toMatch(
      /authentication failed for http:\/\/127\.0\.0\.1:\d+\/repo\.git \(HTTP 401\)/,
    );
    expect(condition(view, 'Ready')?.message).toContain('git-creds');
    expect(JSON.stringify(view)).not.toContain('wrong-pass');
    expect(await configMapData(c, namespace, 'private')).toBeUndefined();

    // The interval is ten minutes: only the Secret watch can make this quick.
    await c.core.replaceNamespacedSecret({
      namespace,
      name: 'git-creds',
      body: {
        metadata: { name: 'git-creds', annotations: SOURCE_HOSTS },
        stringData: { username: 'deploy', password: 's3cret-pass' },
      },
    });
    await waitForReady(c, namespace, 'private', 'True');
    expect(await configMapData(c, namespace, 'private')).toEqual({ k: 'v' });
  });

  it('a second ApplySet claiming an object reports a conflict and leaves the object untouched', async () => {
    const first = await serve({ files: { 'shared.yaml': configMapYaml('shared', { owner: 'first' }) } });
    const second = await serve({
      files: {
        'shared.yaml': configMapYaml('shared', { owner: 'second' }),
        'own.yaml': configMapYaml('second-own', { k: 'v' }),
      },
    });
    await createApplySet(c, namespace, 'first', { url: first.url });
    await waitForReady(c, namespace, 'first', 'True');
    await createApplySet(c, namespace, 'second', { url: second.url });
    const view = await waitForReady(c, namespace, 'second', 'False');
    expect(condition(view, 'Ready')?.reason).toBe('OwnershipConflict');
    expect(condition(view, 'Ready')?.message).toContain('shared');
    expect(view.status?.errors?.items).toContainEqual(
      expect.objectContaining({ object: `${namespace}::ConfigMap:shared` }),
    );
    expect(await configMapData(c, namespace, 'shared')).toEqual({ owner: 'first' });
    // The rest of the set is applied.
    expect(await configMapData(c, namespace, 'second-own')).toEqual({ k: 'v' });
  });
});
