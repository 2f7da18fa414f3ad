import { parseRepositoryUrl } from '../../src/git/parse-repository-url.js';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { treeContent, type RawTreeEntry } from '../harness/crafted-tree.js';
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
import { GitServerPool } from './git-server-pool.js';
import {
  coreRule,
  createTenantAccount,
  grantAccountIn,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Two tenants of one controller, whose repositories share its Git cache: a repository that makes its
// spec.path a symbolic link into the other tenant's files stalls, and applies none of them. The
// controller runs as the chart installs it locked down; each tenant applies as its own account, with a
// Role in its own target namespace only.

describe('the controller and a hostile repository', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-hostile');
  const victimNamespace = uniqueName('e2e-victim');
  const attackerNamespace = uniqueName('e2e-attacker');
  const servers = new GitServerPool();
  let controller: LockedDownController | undefined;

  beforeAll(async () => {
    await installCrd();
    for (const name of [namespace, victimNamespace, attackerNamespace]) await createNamespace(c.kc, name);
    for (const [account, target] of [
      ['victim', victimNamespace],
      ['attacker', attackerNamespace],
    ] as const) {
      await createTenantAccount(c, namespace, account, []);
      await grantAccountIn(c, { namespace, name: account }, target, [coreRule('configmaps', 'secrets')]);
    }
    // The accounts its ApplySets name, which the chart lets the controller impersonate by name only.
    controller = await startLockedDownController({
      namespace,
      values: {
        'gitSources.allowedHosts[0]': '127.0.0.1',
        'tenancy.serviceAccountNames[0]': 'victim',
        'tenancy.serviceAccountNames[1]': 'attacker',
      },
    });
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await controller?.cleanup();
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
    servers.adopt(victim, attacker);
    await createApplySet(c, namespace, 'victim', {
      url: victim.url,
      path: 'private',
      targetNamespace: victimNamespace,
      serviceAccountName: 'victim',
    });
    await createApplySet(c, namespace, 'attacker', {
      url: attacker.url,
      path: 'app',
      targetNamespace: attackerNamespace,
      serviceAccountName: 'attacker',
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

  describe('crafted trees, each committed on top of a good one', () => {
    let attacker: GitTestServer;
    let outsideDir: string;
    const binding = uniqueName('attacker-admin');
    const bindingText =
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ${binding}\n` +
      'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n' +
      `subjects: [{kind: ServiceAccount, name: attacker, namespace: ${namespace}}]\n`;

    beforeAll(async () => {
      outsideDir = await mkdtemp(path.join(tmpdir(), 'applyset-e2e-outside-'));
      attacker = await startGitServer({
        repositoryName: 'crafted.git',
        files: { 'app/cm.yaml': configMapYaml('crafted-config', { k: 'v' }) },
      });
      servers.adopt(attacker);
      await createApplySet(c, namespace, 'crafted', {
        url: attacker.url,
        path: 'app',
        targetNamespace: attackerNamespace,
        serviceAccountName: 'attacker',
      });
      await waitForAppliedCommit(c, namespace, 'crafted', await attacker.revParse('main'));
    });

    afterAll(async () => {
      await rm(outsideDir, { recursive: true, force: true });
    });

    const blob = (text: string) => attacker.writeObject('blob', text);
    const entry = async (mode: string, name: string, text: string): Promise<RawTreeEntry> => ({
      mode,
      name,
      oid: await blob(text),
    });
    const cm = () => entry('100644', 'cm.yaml', configMapYaml('crafted-config', { k: 'v' }));

    it.each<[string, () => Promise<RawTreeEntry[]>, string]>([
      [
        'a link and a file of one name, the link aimed outside the checkout',
        async () => [
          await cm(),
          await entry('120000', 'binding.yaml', path.join(outsideDir, 'planted.yaml')),
          await entry('100644', 'binding.yaml', bindingText),
        ],
        'entry "app/binding.yaml" appears twice in its tree',
      ],
      [
        "a manifest that is a link through '..'",
        async () => [await cm(), await entry('120000', 'x.yaml', '../../x.yaml')],
        'entry "app/x.yaml" is a link to "../../x.yaml", which contains \'..\'',
      ],
      [
        'a manifest that is an absolute link',
        async () => [await cm(), await entry('120000', 'x.yaml', '/etc/passwd')],
        'entry "app/x.yaml" is a link to "/etc/passwd", which is absolute',
      ],
      [
        'a directory named .git',
        async () => [
          await cm(),
          { mode: '40000', name: '.git', oid: await attacker.writeObject('tree', treeContent([await cm()])) },
        ],
        'entry "app/.git" is named like .git',
      ],
      [
        'a directory named ..',
        async () => [
          await cm(),
          { mode: '40000', name: '..', oid: await attacker.writeObject('tree', treeContent([await cm()])) },
        ],
        'entry "app/.." is named ".."',
      ],
    ])(
      '%s: stalls as UnsafeRepository, writes nothing and prunes nothing',
      async (_case, appEntries, problem) => {
        const app = await attacker.writeObject('tree', treeContent(await appEntries()));
        const root = await attacker.writeObject(
          'tree',
          treeContent([{ mode: '40000', name: 'app', oid: app }]),
        );
        const hostile = await attacker.commitTreeObject(root);
        const view = await waitForReady(
          c,
          namespace,
          'crafted',
          'False',
          (v) => v.status?.lastAttemptedRevision === `main@sha1:${hostile}`,
        );
        expect(condition(view, 'Stalled')).toMatchObject({ status: 'True', reason: 'UnsafeRepository' });
        expect(condition(view, 'Ready')?.message).toContain(`unsafe repository: ${problem}`);
        expect(await readdir(outsideDir)).toEqual([]);
        await expect(
          c.kc.makeApiClient(k8s.RbacAuthorizationV1Api).readClusterRoleBinding({ name: binding }),
        ).rejects.toMatchObject({ code: 404 });
        expect(await configMapData(c, attackerNamespace, 'crafted-config')).toEqual({ k: 'v' });
      },
    );
  });
});
