/**
 * Crafted repositories against the Git source: trees built object by object with git's plumbing (the
 * shapes `git mktree` and `git hash-object --literally` let anyone push), served by a real
 * `git http-backend` and read through the real GitSource into a cache that another tenant's repository
 * shares. Nothing a repository holds may write outside its cache or read another repository.
 *
 * Trees git's own server will not pack (an empty name, a NUL inside a name, a mode that contradicts the
 * object's type: `git upload-pack` fails on them) are covered against an in-memory object store in
 * read-tree-manifests.test.ts.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitPathNotFoundError, GitUnsafeTreeError } from '../../src/git/git-error.js';
import { createGitSource, type GitSource } from '../../src/git/git-source.js';
import { parseRepositoryUrl } from '../../src/git/parse-repository-url.js';
import { treeContent, type RawTreeEntry as RawEntry } from '../harness/crafted-tree.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';

/** Every path under `dir` (links not followed), sorted: the whole of what is on disk. */
async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.sort();
}

const SECRET_TEXT =
  'apiVersion: v1\nkind: Secret\nmetadata:\n  name: victim\nstringData:\n  password: victim-pw\n';
const BINDING_TEXT =
  'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: attacker-admin\n' +
  'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n' +
  'subjects: [{kind: ServiceAccount, name: attacker, namespace: attacker}]\n';
const CONFIG_TEXT = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n';

describe('a hostile repository', () => {
  let cacheDir: string;
  let outsideDir: string;
  let servers: GitTestServer[] = [];
  let gitSource: GitSource;
  let attacker: GitTestServer;
  let victim: { server: GitTestServer; commit: string; cacheKey: string };

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'hostile-repository-cache-'));
    outsideDir = await mkdtemp(path.join(os.tmpdir(), 'hostile-repository-outside-'));
    gitSource = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'] });
    attacker = await startGitServer({ repositoryName: 'attacker.git', files: { 'README.md': '# a\n' } });
    const victimServer = await startGitServer({
      repositoryName: 'victim.git',
      files: { 'secret.yaml': SECRET_TEXT },
    });
    servers = [attacker, victimServer];
    // Another tenant's repository in the same cache, fetched first, as the controller shares the cache.
    const fetched = await gitSource.fetch({ url: victimServer.url, ref: { branch: 'main' } });
    victim = {
      server: victimServer,
      commit: fetched.commit,
      cacheKey: parseRepositoryUrl(victimServer.url).cacheKey,
    };
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await rm(cacheDir, { recursive: true, force: true });
    await rm(outsideDir, { recursive: true, force: true });
  });

  const blob = (text: string) => attacker.writeObject('blob', text);
  const tree = (entries: readonly RawEntry[]) => attacker.writeObject('tree', treeContent(entries));
  const link = async (name: string, target: string): Promise<RawEntry> => ({
    mode: '120000',
    name,
    oid: await blob(target),
  });
  const file = async (name: string, text: string): Promise<RawEntry> => ({
    mode: '100644',
    name,
    oid: await blob(text),
  });
  const dir = async (name: string, entries: readonly RawEntry[]): Promise<RawEntry> => ({
    mode: '40000',
    name,
    oid: await tree(entries),
  });

  /** Commits `root` on the attacker's branch, fetches it like the controller and reads `sourcePath`. */
  const fetchAndRead = async (root: readonly RawEntry[], sourcePath?: string) => {
    await attacker.commitTreeObject(await tree(root));
    const fetched = await gitSource.fetch({ url: attacker.url, ref: { branch: 'main' } });
    return gitSource.readManifests({ url: attacker.url, commit: fetched.commit, path: sourcePath });
  };
  const refusal = async (root: readonly RawEntry[], sourcePath?: string) => {
    const error: unknown = await fetchAndRead(root, sourcePath).then(
      (files) => new Error(`read ${JSON.stringify(files)}`),
      (caught: unknown) => caught,
    );
    return error;
  };

  /** The cache holds the two bare repositories and nothing else; nothing was written outside it. */
  const expectNothingWrittenOutside = async () => {
    expect(await readdir(outsideDir)).toEqual([]);
    expect((await readdir(cacheDir)).sort()).toEqual(
      [parseRepositoryUrl(attacker.url).cacheKey, victim.cacheKey].sort(),
    );
    for (const key of await readdir(cacheDir)) {
      expect(await readdir(path.join(cacheDir, key))).toEqual(['repo.git']);
    }
  };

  it.each([
    ['a directory outside the cache', () => path.join(outsideDir, 'planted.yaml')],
    ["another tenant's cache", () => path.join(cacheDir, victim.cacheKey, 'planted.yaml')],
  ])('refuses a link and a file of one name aimed at %s, and writes nothing', async (_where, target) => {
    const victimFilesBefore = await listAll(path.join(cacheDir, victim.cacheKey));
    const error = await refusal([
      await link('binding.yaml', target()),
      await file('binding.yaml', BINDING_TEXT),
    ]);

    expect(await listAll(path.join(cacheDir, victim.cacheKey))).toEqual(victimFilesBefore);
    await expectNothingWrittenOutside();
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect(error).toMatchObject({
      code: 'GIT_UNSAFE_TREE',
      intent: 'stalled',
      entryPath: 'binding.yaml',
      message: 'unsafe repository: entry "binding.yaml" appears twice in its tree',
    });
  });

  it.each([
    ['../../x.yaml', "contains '..'"],
    ['../../../victim/secret.yaml', "contains '..'"],
    ['/etc/passwd', 'is absolute'],
    ['', 'is empty'],
  ])('refuses a manifest that links to %j, naming the link', async (target, reason) => {
    const error = await refusal([
      await dir('deploy', [await file('config.yaml', CONFIG_TEXT), await link('x.yaml', target)]),
    ]);
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect(error).toMatchObject({ entryPath: 'deploy/x.yaml', intent: 'stalled' });
    expect((error as Error).message).toContain(`is a link to ${JSON.stringify(target)}, which ${reason}`);
    await expectNothingWrittenOutside();
  });

  it.each([
    ['relative, to where its checkout was', () => `../../../${victim.cacheKey}/checkouts/${victim.commit}`],
    ['absolute, into its cache', () => path.join(cacheDir, victim.cacheKey)],
  ])("refuses spec.path that is a link to another tenant's files (%s)", async (_how, target) => {
    const error = await refusal([await link('app', target())], 'app/');
    // A successful read would list the files it read in the message: none of the victim's.
    expect((error as Error).message).not.toContain('victim-pw');
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect(error).toMatchObject({ entryPath: 'app' });
    await expectNothingWrittenOutside();
  });

  it('refuses spec.path that passes through a link out of the tree in a middle component', async () => {
    const error = await refusal([await dir('apps', [await link('team', '../..')])], 'apps/team/prod');
    expect(error).toMatchObject({ name: 'GitUnsafeTreeError', entryPath: 'apps/team' });
  });

  it('refuses a link loop, naming a link in it', async () => {
    const error = await refusal([await link('a.yaml', 'b.yaml'), await link('b.yaml', 'a.yaml')]);
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect((error as Error).message).toMatch(
      /entry "[ab]\.yaml" passes through more than 40 links \(a loop\)/,
    );
  });

  it('refuses a link to a name the commit does not have', async () => {
    const error = await refusal([await link('gone.yaml', 'nowhere.yaml')]);
    expect(error).toMatchObject({
      name: 'GitUnsafeTreeError',
      message: 'unsafe repository: entry "gone.yaml" is a link to "nowhere.yaml", which is not in the commit',
    });
  });

  it.each<[string, string | Uint8Array, string]>([
    ['..', '..', 'is named ".."'],
    ['.', '.', 'is named "."'],
    ['.git', '.git', 'is named like .git'],
    ['.GIT', '.GIT', 'is named like .git'],
    ['NTFS .git. ', '.git. ', 'is named like .git'],
    ['NTFS git~1', 'GIT~1', 'is named like .git'],
    ['NTFS .git::$INDEX_ALLOCATION', '.git::$INDEX_ALLOCATION', 'is named like .git'],
    ['HFS+ .g\\u200cit', '.g\u200cit', 'is named like .git'],
    ['a/b.yaml', 'a/b.yaml', 'has a name containing "/"'],
    ['invalid UTF-8', new Uint8Array([0x66, 0xff, 0x2e, 0x79]), 'is not valid UTF-8'],
  ])('refuses an entry named %s, naming its path', async (_label, name, problem) => {
    const bad = { mode: '40000', name, oid: await tree([await file('cm.yaml', CONFIG_TEXT)]) };
    const error = await refusal([await dir('deploy', [await file('config.yaml', CONFIG_TEXT), bad])]);
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect((error as Error).message).toMatch(/^unsafe repository: entry "deploy\//);
    expect((error as Error).message).toContain(problem);
  });

  it('refuses an unknown mode', async () => {
    const oid = await blob(CONFIG_TEXT);
    expect(await refusal([{ mode: '100600', name: 'odd.yaml', oid }])).toMatchObject({
      name: 'GitUnsafeTreeError',
      message: 'unsafe repository: entry "odd.yaml" has the unknown mode 100600',
    });
  });

  it('refuses a tree that lists one subtree so often that a walk would never end', async () => {
    // 100 × 100 × 100 entries from three tree objects: a checkout would have written a million files.
    let level = [await file('cm.yaml', '')];
    for (let depth = 0; depth < 3; depth += 1) {
      const sub = await tree(level);
      level = Array.from({ length: 100 }, (_unused, index) => ({
        mode: '40000',
        name: `d${index}`,
        oid: sub,
      }));
    }
    const started = Date.now();
    const error = await refusal([await dir('bomb', level)], 'bomb');
    expect(error).toMatchObject({
      name: 'GitUnsafeTreeError',
      message:
        'unsafe repository: entry "bomb" holds more than 200000 entries (a subtree listed many times counts each time)',
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    await expectNothingWrittenOutside();
  });

  it('resolves links that stay inside the tree, and skips submodules', async () => {
    const files = await fetchAndRead(
      [
        await dir('deploy', [
          await link('alias.yaml', 'config.yaml'),
          await file('config.yaml', CONFIG_TEXT),
          await link('current', 'v2'),
          await link('loop', '.'),
          { mode: '160000', name: 'vendored', oid: 'a'.repeat(40) },
          await dir('v2', [await file('app.yaml', BINDING_TEXT)]),
        ]),
        await link('live', 'deploy'),
      ],
      'live',
    );
    // Each directory once, by where it really is: `v2` was walked as `current`, `loop` is `deploy` itself.
    expect(files.map(({ path, text }) => ({ path, text }))).toEqual([
      { path: 'alias.yaml', text: CONFIG_TEXT },
      { path: 'config.yaml', text: CONFIG_TEXT },
      { path: 'current/app.yaml', text: BINDING_TEXT },
    ]);
  });

  it('reports spec.path naming a submodule as not found', async () => {
    const error = await refusal([{ mode: '160000', name: 'vendored', oid: 'a'.repeat(40) }], 'vendored');
    expect(error).toBeInstanceOf(GitPathNotFoundError);
    expect(error).toMatchObject({ found: 'submodule', intent: 'stalled' });
  });
});
