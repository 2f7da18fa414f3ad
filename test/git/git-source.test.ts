/**
 * The controller's Git source against a real Git server (git http-backend on loopback): the cache, refs,
 * auth, failures, timeouts, aborts and concurrency.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { GitAuthError, GitRefNotFoundError, GitUnreachableError } from '../../src/git/git-error.js';
import {
  createGitSource,
  type FetchedCommit,
  type GitSource,
  type GitSourceOptions,
} from '../../src/git/git-source.js';
import { parseRepositoryUrl } from '../../src/git/parse-repository-url.js';
import { repositoryCachePaths } from '../../src/git/repository-cache-paths.js';
import { startGitServer, type GitServerOptions, type GitTestServer } from '../harness/git-server.js';

const files = {
  'deploy/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n',
  'deploy/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n',
  'README.md': '# demo\n',
};
const credentials = { username: 'alice', password: 'n0t-l0gged-s3cret' };

/** Polls `condition` until it holds or the deadline passes: no fixed sleeps. */
async function waitFor(condition: () => boolean, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function packFiles(gitdir: string): Promise<string[]> {
  return (await readdir(path.join(gitdir, 'objects', 'pack')))
    .filter((name) => name.endsWith('.pack'))
    .sort();
}

/** The paths of the manifests the source reads at `fetched`'s commit, in the order it reads them. */
async function manifestPaths(gitSource: GitSource, url: string, fetched: FetchedCommit): Promise<string[]> {
  const manifests = await gitSource.readManifests({ url, commit: fetched.commit });
  return manifests.map((file) => file.path);
}

function uploadPackBodies(server: GitTestServer, from: number): string[] {
  return server.requests
    .slice(from)
    .filter((request) => request.method === 'POST' && request.url.endsWith('/git-upload-pack'))
    .map((request) => request.body.toString('utf8'));
}

describe('the Git source', () => {
  let cacheDir: string;
  let servers: GitTestServer[] = [];

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'git-source-test-'));
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
    await rm(cacheDir, { recursive: true, force: true });
  });

  const serve = async (options: GitServerOptions = { files }) => {
    const server = await startGitServer(options);
    servers.push(server);
    return server;
  };
  // The test server listens on loopback, which only an allowed host re-admits.
  const source = (options: Partial<GitSourceOptions> = {}) =>
    createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], ...options });
  const cachePaths = (url: string) => repositoryCachePaths(cacheDir, parseRepositoryUrl(url).cacheKey);

  describe('auth', () => {
    it('fetches without auth', async () => {
      const server = await serve();
      const gitSource = source();
      const checkout = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const sha = await server.revParse('main');
      expect(checkout).toEqual({ revision: `main@sha1:${sha}`, commit: sha, fetched: true });
      expect(await gitSource.readManifests({ url: server.url, commit: sha })).toEqual([
        { path: 'deploy/config.yaml', text: files['deploy/config.yaml'], byteLength: 56 },
        { path: 'deploy/namespace.yaml', text: files['deploy/namespace.yaml'], byteLength: 54 },
      ]);
      // Nothing but the bare repository: no checkout of the commit's files on disk.
      expect(await readdir(cachePaths(server.url).root)).toEqual(['repo.git']);
    });

    it('fetches with basic auth', async () => {
      const server = await serve({ files, auth: credentials });
      const checkout = await source().fetch({ url: server.url, ref: { branch: 'main' }, auth: credentials });
      expect(checkout.commit).toBe(await server.revParse('main'));
      expect(server.requests.some((request) => request.user === 'alice' && request.status === 200)).toBe(
        true,
      );
    });

    it('sends a token as the password of user "git"', async () => {
      const server = await serve({ files, auth: { username: 'git', password: 'ghp_token' } });
      const checkout = await source().fetch({
        url: server.url,
        ref: { branch: 'main' },
        auth: { token: 'ghp_token' },
      });
      expect(checkout.commit).toBe(await server.revParse('main'));
    });

    it('uses credentials from the URL, sharing the cache of the URL without them', async () => {
      const server = await serve({ files, auth: credentials });
      const gitSource = source();
      const fromUrl = await gitSource.fetch({ url: server.urlWithCredentials, ref: { branch: 'main' } });
      const fromAuth = await gitSource.fetch({ url: server.url, ref: { branch: 'main' }, auth: credentials });
      expect(fromUrl).toEqual(fromAuth);
      expect(await readdir(cacheDir)).toEqual([parseRepositoryUrl(server.url).cacheKey]);
    });

    it.each([
      ['a wrong password', { username: 'alice', password: 'wrong-password' }],
      ['no credentials', undefined],
    ])('reports %s as an authentication failure that names the URL and no secret', async (_name, auth) => {
      const server = await serve({ files, auth: credentials });
      const error: unknown = await source()
        .fetch({
          url: server.urlWithCredentials.replace(credentials.password, 'wrong-password'),
          ref: { branch: 'main' },
          auth,
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GitAuthError);
      expect(error).toMatchObject({
        code: 'GIT_AUTH_FAILED',
        intent: 'stalled',
        statusCode: 401,
        message: `authentication failed for ${server.url} (HTTP 401)`,
      });
      const rendered = inspect(error, { depth: 10 });
      expect(rendered).not.toContain('wrong-password');
      expect(rendered).not.toContain(credentials.password);
    });
  });

  describe('the cache', () => {
    it('fetches a new commit into the existing cache, asking only for what is new', async () => {
      const server = await serve();
      const gitSource = source();
      const first = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const { gitdir } = cachePaths(server.url);
      const packsBefore = await packFiles(gitdir);
      expect(packsBefore).toHaveLength(1);

      const second = await server.writeFiles({ 'deploy/new.yaml': 'kind: ConfigMap\n' });
      const requestsBefore = server.requests.length;
      const checkout = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });

      expect(checkout.revision).toBe(`main@sha1:${second}`);
      expect(await manifestPaths(gitSource, server.url, checkout)).toContain('deploy/new.yaml');
      // The same repository, with the old pack kept and one new pack for the new objects.
      const packsAfter = await packFiles(gitdir);
      expect(packsAfter).toEqual(expect.arrayContaining(packsBefore));
      expect(packsAfter).toHaveLength(2);
      const [request] = uploadPackBodies(server, requestsBefore);
      expect(request).toContain(`want ${second}`);
      expect(request).toContain(`have ${first.commit}`);
      expect(request).toContain('deepen 1');
    });

    it('indexes every fetched pack as git index-pack does', async () => {
      const server = await serve();
      const gitSource = source();
      await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const head = await server.writeFiles({
        'deploy/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n',
      });
      const second = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(second.commit).toBe(head);
      const { gitdir } = cachePaths(server.url);
      const packs = await packFiles(gitdir);
      expect(packs).toHaveLength(2);
      for (const pack of packs) {
        const own = await readFile(path.join(gitdir, 'objects', 'pack', pack.replace(/\.pack$/, '.idx')));
        const copy = path.join(cacheDir, pack);
        await copyFile(path.join(gitdir, 'objects', 'pack', pack), copy);
        execFileSync('git', ['index-pack', copy]);
        expect(own).toEqual(await readFile(copy.replace(/\.pack$/, '.idx')));
      }
      // git itself reads the cache as a whole repository.
      execFileSync('git', ['--git-dir', gitdir, 'fsck', '--no-dangling']);
    });

    it('reads a deleted file no more at the new commit, and still at the old one', async () => {
      const server = await serve();
      const gitSource = source();
      const before = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      await server.deleteFiles(['deploy/config.yaml']);
      const after = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(after.commit).not.toBe(before.commit);
      expect(await manifestPaths(gitSource, server.url, after)).toEqual(['deploy/namespace.yaml']);
      expect(await manifestPaths(gitSource, server.url, before)).toEqual([
        'deploy/config.yaml',
        'deploy/namespace.yaml',
      ]);
    });

    it('reports a commit the cache does not hold (any more) as retryable, naming it', async () => {
      const server = await serve();
      const gitSource = source();
      await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const missing = 'f'.repeat(40);
      await expect(gitSource.readManifests({ url: server.url, commit: missing })).rejects.toMatchObject({
        name: 'GitFetchError',
        intent: 'retryable',
        message: `fetching ${server.url} failed: commit ${missing} is no longer in the cache`,
      });
    });

    it('returns the same commit again when the branch has not moved', async () => {
      const server = await serve();
      const gitSource = source();
      const first = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const again = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(again).toEqual(first);
    });

    it('starts the repository cache over when too many pack files pile up', async () => {
      const server = await serve();
      const gitSource = source({ maxPackFiles: 1 });
      await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      await server.writeFiles({ 'a.yaml': 'a: 1\n' });
      await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(await packFiles(cachePaths(server.url).gitdir)).toHaveLength(2);
      const latest = await server.writeFiles({ 'b.yaml': 'b: 1\n' });
      const checkout = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(checkout.commit).toBe(latest);
      expect(await packFiles(cachePaths(server.url).gitdir)).toHaveLength(1);
    });
  });

  describe('refs', () => {
    it('follows a branch other than the default, also when it is moved backwards', async () => {
      const server = await serve();
      const first = await server.revParse('main');
      const second = await server.writeFiles({ 'x.yaml': 'x: 1\n' });
      await server.setBranch('release', second);
      const gitSource = source();
      expect((await gitSource.fetch({ url: server.url, ref: { branch: 'release' } })).revision).toBe(
        `release@sha1:${second}`,
      );
      await server.setBranch('release', first);
      const moved = await gitSource.fetch({ url: server.url, ref: { branch: 'release' } });
      expect(moved.revision).toBe(`release@sha1:${first}`);
      expect(await manifestPaths(gitSource, server.url, moved)).not.toContain('x.yaml');
    });

    it.each([
      ['a lightweight tag', false],
      ['an annotated tag, peeled to its commit', true],
    ])('fetches %s', async (_name, annotated) => {
      const server = await serve();
      const tagged = await server.revParse('main');
      await server.setTag('v1.0.0', tagged, { annotated });
      await server.writeFiles({ 'later.yaml': 'later: true\n' });
      const gitSource = source();
      const checkout = await gitSource.fetch({ url: server.url, ref: { tag: 'v1.0.0' } });
      expect(checkout.revision).toBe(`v1.0.0@sha1:${tagged}`);
      expect(await manifestPaths(gitSource, server.url, checkout)).not.toContain('later.yaml');
    });

    it('follows a tag that is moved', async () => {
      const server = await serve();
      const gitSource = source();
      await server.setTag('stable', 'main');
      await gitSource.fetch({ url: server.url, ref: { tag: 'stable' } });
      const next = await server.writeFiles({ 'next.yaml': 'next: true\n' });
      await server.setTag('stable', next);
      expect((await gitSource.fetch({ url: server.url, ref: { tag: 'stable' } })).commit).toBe(next);
    });

    it('fetches a commit that no ref points at directly, and serves it from the cache afterwards', async () => {
      const server = await serve();
      const old = await server.revParse('main');
      await server.writeFiles({ 'a.yaml': 'a: 1\n' });
      await server.writeFiles({ 'b.yaml': 'b: 1\n' });
      const gitSource = source();
      const checkout = await gitSource.fetch({ url: server.url, ref: { commit: old } });
      expect(checkout).toMatchObject({ revision: `sha1:${old}`, commit: old, fetched: true });
      // git's smart HTTP serves a commit reachable from a ref: one shallow request, no full history.
      const [request, ...more] = uploadPackBodies(server, 0);
      expect(more).toEqual([]);
      expect(request).toContain(`want ${old}`);
      expect(request).toContain('deepen 1');
      expect(await manifestPaths(gitSource, server.url, checkout)).toEqual([
        'deploy/config.yaml',
        'deploy/namespace.yaml',
      ]);

      // Asked for now (maxAgeMs 0), the server is asked whether the caller may still read the repository
      // (its refs), and the objects come from the cache.
      const requestsBefore = server.requests.length;
      const again = await gitSource.fetch({ url: server.url, ref: { commit: old } });
      expect(again).toMatchObject({ commit: old, fetched: false });
      expect(server.requests.slice(requestsBefore).map((request) => request.url)).toEqual([
        '/repo.git/info/refs?service=git-upload-pack',
      ]);
    });

    it.each([
      [{ branch: 'missing' }, 'branch missing'],
      [{ tag: 'missing' }, 'tag missing'],
      [{ commit: 'f'.repeat(40) }, `commit ${'f'.repeat(40)}`],
      [{ commit: 'abc123' }, 'commit abc123'],
    ])('reports %j as not found (stalled)', async (ref, description) => {
      const server = await serve();
      const error: unknown = await source()
        .fetch({ url: server.url, ref })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GitRefNotFoundError);
      expect(error).toMatchObject({ intent: 'stalled', message: expect.stringContaining(description) });
    });

    it('reports a branch of an empty repository as not found', async () => {
      const server = await serve({});
      await expect(source().fetch({ url: server.url, ref: { branch: 'main' } })).rejects.toBeInstanceOf(
        GitRefNotFoundError,
      );
    });
  });

  describe('failures, deadlines and cancellation', () => {
    it('fails fast with a retryable error when the server is unreachable', async () => {
      const server = await serve();
      await server.goOffline();
      const started = Date.now();
      const error: unknown = await source({ timeoutMs: 60_000 })
        .fetch({ url: server.url, ref: { branch: 'main' } })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GitUnreachableError);
      expect(error).toMatchObject({
        intent: 'retryable',
        message: `Git source ${server.url} unreachable or not a Git repository`,
        detail: 'ECONNREFUSED',
      });
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('serves the cache again when the server comes back', async () => {
      const server = await serve();
      const gitSource = source();
      await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      await server.goOffline();
      await expect(gitSource.fetch({ url: server.url, ref: { branch: 'main' } })).rejects.toBeInstanceOf(
        GitUnreachableError,
      );
      await server.goOnline();
      const next = await server.writeFiles({ 'back.yaml': 'back: true\n' });
      expect((await gitSource.fetch({ url: server.url, ref: { branch: 'main' } })).commit).toBe(next);
    });

    it('times out a server that does not answer, and the next fetch of that URL still works', async () => {
      const server = await serve();
      const gitSource = source();
      const hold = server.hold();
      const started = Date.now();
      const error: unknown = await gitSource
        .fetch({ url: server.url, ref: { branch: 'main' } }, { timeoutMs: 300 })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GitUnreachableError);
      expect(error).toMatchObject({
        message: `Git source ${server.url} unreachable or not a Git repository`,
        detail: 'no answer within 300 ms',
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      hold.release();
      const checkout = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(checkout.commit).toBe(await server.revParse('main'));
    });

    it('rejects at once when aborted mid-fetch, and a late answer does not disturb the next fetch', async () => {
      const server = await serve();
      const gitSource = source();
      await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const next = await server.writeFiles({ 'next.yaml': 'next: true\n' });

      const hold = server.hold();
      const controller = new AbortController();
      const aborted = gitSource.fetch(
        { url: server.url, ref: { branch: 'main' } },
        { signal: controller.signal },
      );
      await waitFor(() => hold.waiting() > 0);
      controller.abort();
      await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });

      // Queued behind the abandoned fetch; it must see a consistent cache once the server answers.
      const following = gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      hold.release();
      const checkout = await following;
      expect(checkout.commit).toBe(next);
      expect(await manifestPaths(gitSource, server.url, checkout)).toContain('next.yaml');
    });

    it('rejects a fetch whose signal is already aborted without touching the network', async () => {
      const server = await serve();
      const controller = new AbortController();
      controller.abort();
      await expect(
        source().fetch({ url: server.url, ref: { branch: 'main' } }, { signal: controller.signal }),
      ).rejects.toMatchObject({ name: 'AbortError' });
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('concurrency', () => {
    it('completes two concurrent fetches of one URL with the same result', async () => {
      const server = await serve();
      const gitSource = source();
      const [one, two] = await Promise.all([
        gitSource.fetch({ url: server.url, ref: { branch: 'main' } }),
        gitSource.fetch({ url: server.url, ref: { branch: 'main' } }),
      ]);
      expect(one).toEqual(two);
      expect(await manifestPaths(gitSource, server.url, one)).toEqual([
        'deploy/config.yaml',
        'deploy/namespace.yaml',
      ]);
    });

    it('serves concurrent fetches of different refs of one URL from one cache', async () => {
      const server = await serve();
      const first = await server.revParse('main');
      await server.setTag('v1', first, { annotated: true });
      const second = await server.writeFiles({ 'b.yaml': 'b: 1\n' }, { branch: 'feature' });
      const third = await server.writeFiles({ 'c.yaml': 'c: 1\n' });
      const gitSource = source();
      const results = await Promise.all([
        gitSource.fetch({ url: server.url, ref: { branch: 'main' } }),
        gitSource.fetch({ url: server.url, ref: { branch: 'feature' } }),
        gitSource.fetch({ url: server.url, ref: { tag: 'v1' } }),
        gitSource.fetch({ url: server.url, ref: { commit: first } }),
        gitSource.fetch({ url: server.url, ref: { branch: 'main' } }),
      ]);
      expect(results.map((result) => result.commit)).toEqual([third, second, first, first, third]);
      expect(await readdir(cacheDir)).toHaveLength(1);
    });
  });

  describe('single flight', () => {
    const fetchesOf = (server: GitTestServer, from = 0) =>
      server.requests.slice(from).filter((r) => r.method === 'GET' && r.url.includes('/info/refs')).length;

    it('answers 50 concurrent fetches of one URL and ref with one fetch', async () => {
      const server = await serve();
      const gitSource = source();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => gitSource.fetch({ url: server.url, ref: { branch: 'main' } })),
      );
      expect(new Set(results.map((r) => r.commit))).toEqual(new Set([await server.revParse('main')]));
      expect(fetchesOf(server)).toBe(1);
    });

    it('reuses a finished fetch younger than maxAgeMs, and fetches again once it is older', async () => {
      const server = await serve();
      let clock = 1_000_000;
      const gitSource = source({ now: () => clock });
      const first = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      const newer = await server.writeFiles({ 'c.yaml': 'c: 1\n' });
      clock += 30_000;
      const reused = await gitSource.fetch(
        { url: server.url, ref: { branch: 'main' } },
        { maxAgeMs: 60_000 },
      );
      expect(reused).toEqual(first);
      expect(fetchesOf(server)).toBe(1);
      // Without maxAgeMs, or past it, the network is asked and the new commit is seen.
      const fresh = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      expect(fresh.commit).toBe(newer);
      clock += 61_000;
      const aged = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } }, { maxAgeMs: 60_000 });
      expect(aged.commit).toBe(newer);
      expect(fetchesOf(server)).toBe(3);
    });

    it('never shares an answer between callers with different credentials', async () => {
      const server = await serve({ files, auth: credentials });
      const gitSource = source();
      await gitSource.fetch(
        { url: server.url, ref: { branch: 'main' }, auth: credentials },
        { maxAgeMs: 60_000 },
      );
      // A caller without the credentials must ask the server, and be refused, not get the cached answer.
      await expect(
        gitSource.fetch({ url: server.url, ref: { branch: 'main' } }, { maxAgeMs: 60_000 }),
      ).rejects.toBeInstanceOf(GitAuthError);
      await expect(
        gitSource.fetch(
          { url: server.url, ref: { branch: 'main' }, auth: { username: 'alice', password: 'wrong' } },
          { maxAgeMs: 60_000 },
        ),
      ).rejects.toBeInstanceOf(GitAuthError);
    });

    it('does not abort the shared fetch when one caller gives up', async () => {
      const server = await serve();
      const gitSource = source();
      const hold = server.hold();
      const quitter = new AbortController();
      const leaving = gitSource.fetch(
        { url: server.url, ref: { branch: 'main' } },
        { signal: quitter.signal },
      );
      const staying = gitSource.fetch({ url: server.url, ref: { branch: 'main' } });
      await waitFor(() => hold.waiting() > 0);
      quitter.abort(new Error('caller gave up'));
      await expect(leaving).rejects.toThrow('caller gave up');
      hold.release();
      expect((await staying).commit).toBe(await server.revParse('main'));
      expect(fetchesOf(server)).toBe(1);
    });

    it('does not keep a failure for later callers', async () => {
      const server = await serve();
      const gitSource = source();
      await expect(
        gitSource.fetch({ url: server.url, ref: { branch: 'missing' } }, { maxAgeMs: 60_000 }),
      ).rejects.toBeInstanceOf(GitRefNotFoundError);
      await server.writeFiles({ 'x.yaml': 'x: 1\n' }, { branch: 'missing' });
      const found = await gitSource.fetch(
        { url: server.url, ref: { branch: 'missing' } },
        { maxAgeMs: 60_000 },
      );
      expect(found.commit).toBe(await server.revParse('missing'));
    });
  });
});
