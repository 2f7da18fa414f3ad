import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  applySetBody,
  cluster,
  configMapData,
  configMapYaml,
  getApplySet,
  installCrd,
  kubectl,
  kubectlApply,
  logCount,
  patchApplySet,
  startController,
  waitFor,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';

// Issue #14, sharding: controllers started with --watch-label-selector each reconcile only the
// ApplySets their selector matches, and with their own --lease-name each shard elects its own leader.

const SHARD_KEY = 'sharding.applyset.dev/key';

describe('two shards', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-shards');
  let git: GitTestServer;
  let shard1: ControllerProcess;
  let shard2: ControllerProcess;

  const shardController = (shard: string) =>
    startController({
      namespace,
      args: [
        '--leader-elect',
        '--lease-name',
        `applyset-${shard}`,
        '--watch-label-selector',
        `${SHARD_KEY} in (${shard})`,
      ],
      env: { POD_NAME: `controller-${shard}` },
    });

  const createInShard = async (name: string, path: string, shard: string | undefined) => {
    const body = applySetBody(namespace, name, { url: git.url, path, interval: '1h' });
    const metadata = {
      ...(body['metadata'] as object),
      ...(shard === undefined ? {} : { labels: { [SHARD_KEY]: shard } }),
    };
    await kubectlApply(JSON.stringify({ ...body, metadata }));
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    git = await startGitServer({
      files: {
        'one/cm.yaml': configMapYaml('from-one', { shard: '1' }),
        'two/cm.yaml': configMapYaml('from-two', { shard: '2' }),
        'none/cm.yaml': configMapYaml('from-none', { shard: 'none' }),
      },
    });
    [shard1, shard2] = await Promise.all([shardController('shard1'), shardController('shard2')]);
  });

  afterAll(() => stopControllersAndGit(git));

  it('each controller reconciles only the ApplySets of its shard, and each shard has its own leader', async () => {
    await createInShard('one', 'one', 'shard1');
    await createInShard('two', 'two', 'shard2');
    await createInShard('none', 'none', undefined);

    await waitForReady(c, namespace, 'one', 'True', () => true, 60_000);
    await waitForReady(c, namespace, 'two', 'True', () => true, 60_000);
    expect(await configMapData(c, namespace, 'from-one')).toEqual({ shard: '1' });
    expect(await configMapData(c, namespace, 'from-two')).toEqual({ shard: '2' });

    expect(logCount(shard1, `${namespace}/one`, 'reconciled')).toBeGreaterThan(0);
    expect(logCount(shard2, `${namespace}/one`, 'reconciled')).toBe(0);
    expect(logCount(shard2, `${namespace}/two`, 'reconciled')).toBeGreaterThan(0);
    expect(logCount(shard1, `${namespace}/two`, 'reconciled')).toBe(0);
    // An ApplySet of no shard is nobody's: both informers have listed it away, neither reconciled it.
    for (const controller of [shard1, shard2]) {
      expect(controller.logs.some((line) => line['applyset'] === `${namespace}/none`)).toBe(false);
    }
    expect((await getApplySet(c, namespace, 'none'))?.status).toBeUndefined();
    expect(await configMapData(c, namespace, 'from-none')).toBeUndefined();

    const holders = await Promise.all(
      ['applyset-shard1', 'applyset-shard2'].map(async (lease) =>
        (
          await kubectl(['-n', namespace, 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}'])
        ).trim(),
      ),
    );
    expect(holders).toEqual(['controller-shard1', 'controller-shard2']);
  });

  it('an ApplySet relabelled to the other shard is reconciled there, and no longer by its old shard', async () => {
    await patchApplySet(namespace, 'one', { metadata: { labels: { [SHARD_KEY]: 'shard2' } } });
    const requested = new Date().toISOString();
    await patchApplySet(namespace, 'one', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': requested } },
    });
    await waitFor(
      'shard2 to reconcile the relabelled ApplySet',
      async () => (logCount(shard2, `${namespace}/one`, 'reconciled') > 0 ? true : undefined),
      60_000,
    );
    await waitFor(
      'the request to be handled',
      async () =>
        (await getApplySet(c, namespace, 'one'))?.status?.lastHandledReconcileAt === requested
          ? true
          : undefined,
      60_000,
    );
    const byShard1 = logCount(shard1, `${namespace}/one`, 'reconciled');
    const again = `${requested}-again`;
    await patchApplySet(namespace, 'one', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': again } },
    });
    await waitFor(
      'the second request to be handled',
      async () =>
        (await getApplySet(c, namespace, 'one'))?.status?.lastHandledReconcileAt === again ? true : undefined,
      60_000,
    );
    expect(logCount(shard1, `${namespace}/one`, 'reconciled')).toBe(byShard1);
  });
});
