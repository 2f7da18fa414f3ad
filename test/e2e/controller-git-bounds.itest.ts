import { readFile } from 'node:fs/promises';
import { writeManyBlobsTree, writeRandomBlob, writeZeroBlob } from '../harness/bulk-git-objects.js';
import { treeContent, type RawTreeEntry } from '../harness/crafted-tree.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import type { ControllerProcess } from './controller-process.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';
import { GitServerPool } from './git-server-pool.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';

// Repositories a tenant can push that cost the controller far more than their size on the wire: a file
// of zeros packs a thousandfold, and a pack of many small objects is cheap to send. Each stalls its own
// ApplySet, naming the bound and its flag, while another tenant's ApplySet stays Ready and keeps
// applying, and the controller's peak memory (VmHWM: the kernel's record of its largest resident set)
// stays under the chart's memory limit. The repositories are built once, by git itself, from streams.

const CHART_MEMORY_LIMIT = 512 * 1024 * 1024;
const MiB = 1024 * 1024;

/** The controller's peak resident set so far, in bytes. */
async function peakRssOf(controller: ControllerProcess): Promise<number> {
  const status = await readFile(`/proc/${controller.child.pid}/status`, 'utf8');
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmHWM in /proc/${controller.child.pid}/status`);
  return Number(kib) * 1024;
}

describe('the controller and repositories over its Git bounds', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-git-bounds');
  const servers = new GitServerPool();
  let controller: ControllerProcess;
  let good: GitTestServer;

  /** A repository whose main has `app/cm.yaml` and, beside it in `app`, `extra`. */
  const hostileRepository = async (
    name: string,
    extra: (server: GitTestServer) => Promise<RawTreeEntry>,
  ): Promise<{ server: GitTestServer; commit: string }> => {
    const server = await startGitServer({
      repositoryName: `${name}.git`,
      files: { 'README.md': '# hostile\n' },
    });
    servers.adopt(server);
    const cm = await server.writeObject('blob', configMapYaml(`${name}-config`, { k: 'v' }));
    const entries = [await extra(server), { mode: '100644', name: 'cm.yaml', oid: cm }];
    const app = await server.writeObject('tree', treeContent(entries));
    const root = await server.writeObject('tree', treeContent([{ mode: '40000', name: 'app', oid: app }]));
    return { server, commit: await server.commitTreeObject(root) };
  };

  beforeAll(async () => {
    controller = await startControllerInNamespace(c, namespace);
    await createTenantAccount(c, namespace, 'tenant', [coreRule('configmaps')]);
    good = await startGitServer({
      repositoryName: 'good.git',
      files: { 'app/cm.yaml': configMapYaml('good-config', { round: '1' }) },
    });
    servers.adopt(good);
    await createApplySet(c, namespace, 'good', { url: good.url, path: 'app', serviceAccountName: 'tenant' });
    await waitForAppliedCommit(c, namespace, 'good', await good.revParse('main'));
  }, 60_000);

  afterAll(async () => {
    await stopControllersAndGit(servers);
  });

  it.each<[string, string, (server: GitTestServer) => Promise<RawTreeEntry>, string]>([
    [
      'a 1 GiB file of zeros',
      'zeros',
      async (server) => ({
        mode: '100644',
        name: 'zeros.yaml',
        oid: await writeZeroBlob(server.repositoryDir, 1024 * MiB),
      }),
      'a blob object of 1073741824 bytes is larger than the 16777216 bytes (--git-max-object-bytes) an object may have',
    ],
    [
      'a 64 MiB single object',
      'single',
      async (server) => ({
        mode: '100644',
        name: 'big.yaml',
        oid: await writeZeroBlob(server.repositoryDir, 64 * MiB),
      }),
      'a blob object of 67108864 bytes is larger than the 16777216 bytes (--git-max-object-bytes) an object may have',
    ],
    [
      'a pack of 100,000 small objects',
      'many',
      async (server) => ({
        mode: '40000',
        name: 'bulk',
        oid: await writeManyBlobsTree(server.repositoryDir, 100_000),
      }),
      'the pack holds 100005 objects, more than the 50000 objects (--git-max-fetch-objects) one fetch may bring',
    ],
  ])(
    '%s stalls only its own ApplySet, and the peak RSS stays under 512 MiB',
    async (_case, name, extra, problem) => {
      const { server, commit } = await hostileRepository(name, extra);
      await createApplySet(c, namespace, name, {
        url: server.url,
        path: 'app',
        serviceAccountName: 'tenant',
        // One refusal is all the test needs: no refetch of the hostile pack every 5 s.
        interval: '10m',
      });
      const view = await waitForReady(
        c,
        namespace,
        name,
        'False',
        // A refused fetch tells no revision (today's main, which fetches the commit, tells it).
        (v) =>
          condition(v, 'Stalled')?.reason === 'RepositoryTooLarge' ||
          v.status?.lastAttemptedRevision === `main@sha1:${commit}`,
        150_000,
      );
      const peakRss = await peakRssOf(controller);
      // In MiB, so that a failure reads as the peak it measured.
      expect(Math.round(peakRss / MiB)).toBeLessThan(CHART_MEMORY_LIMIT / MiB);
      expect(condition(view, 'Stalled')).toMatchObject({ status: 'True', reason: 'RepositoryTooLarge' });
      expect(condition(view, 'Ready')?.message).toBe(
        `${server.url} is over a limit of the controller: ${problem}`,
      );
      // Nothing of the hostile commit was applied.
      expect(await configMapData(c, namespace, `${name}-config`)).toBeUndefined();

      // The other tenant's ApplySet is still Ready, and still applies what its repository says.
      const round = await good.writeFiles({ 'app/cm.yaml': configMapYaml('good-config', { round: name }) });
      await waitForAppliedCommit(c, namespace, 'good', round, 60_000);
      expect(await configMapData(c, namespace, 'good-config')).toEqual({ round: name });
      expect(controller.child.exitCode).toBeNull();
    },
    180_000,
  );
  it('a pack just under the fetch bound is fetched, and the peak RSS stays under 512 MiB', async () => {
    // Three files of 15 MiB that do not compress: a 45 MiB pack, within every fetch bound, whose files
    // the manifest limits then refuse.
    const { server, commit } = await hostileRepository('noise', async (repository) => ({
      mode: '40000',
      name: 'noise',
      oid: await repository.writeObject(
        'tree',
        treeContent(
          await Promise.all(
            ['a.yaml', 'b.yaml', 'c.yaml'].map(async (file) => ({
              mode: '100644',
              name: file,
              oid: await writeRandomBlob(repository.repositoryDir, 15 * MiB),
            })),
          ),
        ),
      ),
    }));
    await createApplySet(c, namespace, 'noise', {
      url: server.url,
      path: 'app',
      serviceAccountName: 'tenant',
      interval: '10m',
    });
    const view = await waitForReady(
      c,
      namespace,
      'noise',
      'False',
      (v) => v.status?.lastAttemptedRevision === `main@sha1:${commit}`,
      150_000,
    );
    expect(Math.round((await peakRssOf(controller)) / MiB)).toBeLessThan(CHART_MEMORY_LIMIT / MiB);
    expect(condition(view, 'Ready')?.message).toContain('per manifest file');
    expect(controller.child.exitCode).toBeNull();
  }, 180_000);
});
