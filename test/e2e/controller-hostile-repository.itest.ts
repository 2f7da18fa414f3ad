import { parseRepositoryUrl } from '../../src/git/parse-repository-url.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  startController,
  stopAllControllers,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Two tenants of one controller, whose repositories share its Git cache: a repository that makes its
// spec.path a symbolic link into the other tenant's files stalls, and applies none of them.

describe('the controller and a hostile repository', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-hostile');
  const victimNamespace = uniqueName('e2e-victim');
  const attackerNamespace = uniqueName('e2e-attacker');
  const servers: GitTestServer[] = [];

  beforeAll(async () => {
    await installCrd();
    for (const name of [namespace, victimNamespace, attackerNamespace]) await createNamespace(c.kc, name);
    await startController({ namespace });
  });

  afterAll(async () => {
    await stopAllControllers();
    await Promise.all(servers.map((server) => server.close()));
  });

  it('stalls with UnsafeRepository when spec.path links into another tenant, applying nothing of it', async () => {
    const victim = await startGitServer({
      repositoryName: 'victim.git',
      files: {
        'private/secret.yaml':
          'apiVersion: v1\nkind: Secret\nmetadata:\n  name: victim-secret\nstringData:\n  password: victim-pw\n',
      },
    });
    const attacker = await startGitServer({
      repositoryName: 'attacker.git',
      files: { 'app/cm.yaml': configMapYaml('attacker-config', { k: 'v' }) },
    });
    servers.push(victim, attacker);
    await createApplySet(c, namespace, 'victim', {
      url: victim.url,
      path: 'private',
      targetNamespace: victimNamespace,
    });
    await createApplySet(c, namespace, 'attacker', {
      url: attacker.url,
      path: 'app',
      targetNamespace: attackerNamespace,
    });
    const victimCommit = await victim.revParse('main');
    await waitForAppliedCommit(c, namespace, 'victim', victimCommit);
    await waitForAppliedCommit(c, namespace, 'attacker', await attacker.revParse('main'));

    // `app` becomes a link to where the victim's checkout of that commit was kept in the shared cache.
    const victimKey = parseRepositoryUrl(victim.url).cacheKey;
    const target = `../../../${victimKey}/checkouts/${victimCommit}/private`;
    const linkBlob = await attacker.writeObject('blob', target);
    const tree = await attacker.writeObject(
      'tree',
      Buffer.concat([Buffer.from('120000 app\0'), Buffer.from(linkBlob, 'hex')]),
    );
    const hostile = await attacker.commitTreeObject(tree);

    const view = await waitForReady(
      c,
      namespace,
      'attacker',
      'False',
      (v) => v.status?.lastAttemptedRevision === `main@sha1:${hostile}`,
    );
    expect(condition(view, 'Stalled')).toMatchObject({ status: 'True', reason: 'UnsafeRepository' });
    expect(condition(view, 'Ready')?.message).toBe(
      `unsafe repository: entry "app" is a link to ${JSON.stringify(target)}, which contains '..' ` +
        '(links may only point below their directory)',
    );
    const secret = await c.core
      .readNamespacedSecret({ namespace: attackerNamespace, name: 'victim-secret' })
      .then(
        () => 'found',
        (error: unknown) => (error as { code?: number }).code,
      );
    expect(secret).toBe(404);
    // A refused commit prunes nothing.
    expect(await configMapData(c, attackerNamespace, 'attacker-config')).toEqual({ k: 'v' });
  });
});
