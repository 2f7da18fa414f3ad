/**
 * The bounds of a fetch and of the cache on disk, through the real Git source against a real
 * `git http-backend`: a repository over a bound is refused, naming the flag, before anything of it is
 * inflated or kept, and another repository of the same source is fetched and read as before.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chooseEvictions } from '../../src/git/git-cache-budget.js';
import { GitRepositoryTooLargeError } from '../../src/git/git-error.js';
import { createGitSource, type GitSourceOptions } from '../../src/git/git-source.js';
import { repositoryCachePaths } from '../../src/git/repository-cache-paths.js';
import { parseRepositoryUrl } from '../../src/git/parse-repository-url.js';
import { writeManyBlobsTree, writeZeroBlob } from '../harness/bulk-git-objects.js';
import { treeContent } from '../harness/crafted-tree.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';

const CONFIG = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n';

describe('the bounds of a fetch', () => {
  let cacheDir: string;
  let servers: GitTestServer[] = [];

  const serve = async (name: string): Promise<GitTestServer> => {
    const server = await startGitServer({ repositoryName: `${name}.git`, files: { 'app/cm.yaml': CONFIG } });
    servers.push(server);
    return server;
  };

  /** A commit of `app/cm.yaml` beside `extra` (one entry of the root tree) on main. */
  const commitBeside = async (server: GitTestServer, extra: { mode: string; name: string; oid: string }) => {
    const cm = await server.writeObject('blob', CONFIG);
    const app = await server.writeObject('tree', treeContent([{ mode: '100644', name: 'cm.yaml', oid: cm }]));
    const root = treeContent([{ mode: '40000', name: 'app', oid: app }, extra]);
    return server.commitTreeObject(await server.writeObject('tree', root));
  };

  const packsOf = async (url: string): Promise<string[]> => {
    const { gitdir } = repositoryCachePaths(cacheDir, parseRepositoryUrl(url).cacheKey);
    const names = await readdir(path.join(gitdir, 'objects', 'pack')).catch(() => []);
    return names.filter((name) => name.endsWith('.pack'));
  };

  // The test Git server is on loopback, which a source may name only when allowed.
  const source = (options: Partial<GitSourceOptions> = {}) =>
    createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], ...options });

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'git-fetch-limits-cache-'));
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('refuses a 64 MiB file of zeros by its header under the default bounds, and keeps no pack of it', async () => {
    const hostile = await serve('zeros');
    const good = await serve('good');
    const blob = await writeZeroBlob(hostile.repositoryDir, 64 << 20);
    await commitBeside(hostile, { mode: '100644', name: 'zeros.yaml', oid: blob });
    const git = source();
    const refused = git.fetch({ url: hostile.url, ref: { branch: 'main' } });
    await expect(refused).rejects.toThrow(GitRepositoryTooLargeError);
    await expect(refused).rejects.toThrow(
      `${hostile.url} is over a limit of the controller: a blob object of 67108864 bytes is larger than ` +
        'the 16777216 bytes (--git-max-object-bytes) an object may have',
    );
    await expect(refused).rejects.toMatchObject({ intent: 'stalled', reason: 'RepositoryTooLarge' });
    expect(await packsOf(hostile.url)).toEqual([]);
    const fetched = await git.fetch({ url: good.url, ref: { branch: 'main' } });
    const files = await git.readManifests({ url: good.url, commit: fetched.commit, path: 'app' });
    expect(files.map((file) => file.path)).toEqual(['cm.yaml']);
  });

  it('refuses a pack of more objects than --git-max-fetch-objects', async () => {
    const hostile = await serve('many');
    const tree = await writeManyBlobsTree(hostile.repositoryDir, 300);
    await commitBeside(hostile, { mode: '40000', name: 'bulk', oid: tree });
    await expect(
      source({ fetchLimits: { maxFetchObjects: 100 } }).fetch({ url: hostile.url, ref: { branch: 'main' } }),
    ).rejects.toThrow(/the pack holds 30\d objects, more than the 100 objects \(--git-max-fetch-objects\)/);
    expect(await packsOf(hostile.url)).toEqual([]);
  });

  it('stops a fetch that downloads more than --git-max-fetch-bytes', async () => {
    const hostile = await serve('bytes');
    // Incompressible: the pack is as large as the file.
    const noise = randomBytes(300_000);
    await commitBeside(hostile, {
      mode: '100644',
      name: 'noise.bin',
      oid: await hostile.writeObject('blob', noise),
    });
    const refused = source({ fetchLimits: { maxFetchBytes: 100_000 } }).fetch({
      url: hostile.url,
      ref: { branch: 'main' },
    });
    await expect(refused).rejects.toThrow(
      'the fetch received more than the 100000 bytes (--git-max-fetch-bytes) one fetch may bring',
    );
    await expect(refused).rejects.toMatchObject({ reason: 'RepositoryTooLarge' });
    expect(await packsOf(hostile.url)).toEqual([]);
  });
});

describe('the bounds of the cache on disk', () => {
  let cacheDir: string;
  let servers: GitTestServer[] = [];

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'git-cache-budget-'));
    servers = await Promise.all(
      ['a', 'b'].map((name) =>
        startGitServer({ repositoryName: `${name}.git`, files: { 'cm.yaml': `${CONFIG}# ${name}\n` } }),
      ),
    );
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await rm(cacheDir, { recursive: true, force: true });
  });

  const cached = async () => (await readdir(cacheDir)).sort();
  const keyOf = (server: GitTestServer) => parseRepositoryUrl(server.url).cacheKey;

  it('removes the repository used least recently once the cache is over --git-cache-max-bytes', async () => {
    const [a, b] = servers as [GitTestServer, GitTestServer];
    // Room for one repository of this size, not two.
    const git = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], cacheMaxBytes: 3_000 });
    const polling = { maxAgeMs: 60_000 };
    const first = await git.fetch({ url: a.url, ref: { branch: 'main' } }, polling);
    expect(await cached()).toEqual([keyOf(a)]);
    await git.fetch({ url: b.url, ref: { branch: 'main' } });
    expect(await cached()).toEqual([keyOf(b)]);
    // The evicted repository is fetched again when it is needed, even by a poll that would take a
    // young fetch's answer, and read.
    const requests = a.requests.length;
    await git.fetch({ url: a.url, ref: { branch: 'main' } }, polling);
    expect(a.requests.length).toBeGreaterThan(requests);
    const files = await git.readManifests({ url: a.url, commit: first.commit });
    expect(files.map((file) => file.text)).toEqual([`${CONFIG}# a\n`]);
    expect(await cached()).toEqual([keyOf(a)]);
  });

  it('starts a repository over at its next fetch once it is over --git-cache-max-repository-bytes', async () => {
    const [a] = servers as [GitTestServer];
    const packs = async () => {
      const { gitdir } = repositoryCachePaths(cacheDir, keyOf(a));
      return (await readdir(path.join(gitdir, 'objects', 'pack'))).filter((name) => name.endsWith('.pack'));
    };
    const git = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], cacheMaxRepositoryBytes: 1 });
    await git.fetch({ url: a.url, ref: { branch: 'main' } });
    await a.writeFiles({ 'more.yaml': CONFIG });
    const second = await git.fetch({ url: a.url, ref: { branch: 'main' } });
    // Without the bound the second fetch adds a pack beside the first.
    expect(await packs()).toHaveLength(1);
    expect((await git.readManifests({ url: a.url, commit: second.commit })).map((file) => file.path)).toEqual(
      ['cm.yaml', 'more.yaml'],
    );
  });
});

describe('chooseEvictions', () => {
  it('removes the least recently used first, never the one kept, until the rest fits', () => {
    const entries = [
      ['old', 50],
      ['kept', 100],
      ['mid', 30],
      ['new', 20],
    ] as const;
    expect(chooseEvictions(entries, 200, 'new')).toEqual([]);
    expect(chooseEvictions(entries, 150, 'new')).toEqual(['old']);
    expect(chooseEvictions(entries, 100, 'kept')).toEqual(['old', 'mid', 'new']);
    expect(chooseEvictions(entries, 10, 'kept')).toEqual(['old', 'mid', 'new']);
  });
});
