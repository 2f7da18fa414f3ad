/**
 * createPackReadFs against real bare repositories written by the git CLI: what isomorphic-git reads
 * through it is what it reads through Node's own file system, the calls each object cost are asked once
 * per cache, and loose objects are still found where a repository has them.
 */
import { promises } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { gitFs } from '../../src/git/git-fs.js';
import { createPackReadFs } from '../../src/git/pack-read-fs.js';
import { runGit } from '../harness/run-git.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-pack-read-fs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: tmpdir() };

/** A bare repository holding `texts` as blobs; packed (no loose object left) unless `loose`. */
async function repository(name: string, texts: readonly string[], loose = false) {
  const gitdir = join(dir, name);
  await runGit(['init', '-q', '--bare', gitdir], { cwd: dir, env, input: undefined });
  const oids: string[] = [];
  for (const text of texts) {
    const { stdout } = await runGit(['hash-object', '-w', '--stdin'], { cwd: gitdir, env, input: text });
    oids.push(stdout.trim());
  }
  if (!loose) {
    // A pack needs something that reaches the blobs: a tree of them.
    const listing = oids.map((oid, index) => `100644 blob ${oid}\tfile-${index}\n`).join('');
    const { stdout } = await runGit(['mktree'], { cwd: gitdir, env, input: listing });
    await runGit(['update-ref', 'refs/heads/main', (await commitOf(gitdir, stdout.trim())).trim()], {
      cwd: gitdir,
      env,
      input: undefined,
    });
    await runGit(['repack', '-a', '-d', '-q'], { cwd: gitdir, env, input: undefined });
    await runGit(['prune-packed', '-q'], { cwd: gitdir, env, input: undefined });
  }
  return { gitdir, oids };
}

async function commitOf(gitdir: string, tree: string): Promise<string> {
  const author = {
    ...env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  return (await runGit(['commit-tree', tree, '-m', 'm'], { cwd: gitdir, env: author, input: undefined }))
    .stdout;
}

/** The paths Node's promise API was asked to stat, list and read while `work` ran. */
async function calls<T>(work: () => Promise<T>) {
  const asked = { stat: [] as string[], readdir: [] as string[], readFile: [] as string[] };
  const original = { stat: promises.stat, readdir: promises.readdir, readFile: promises.readFile };
  const counted = <F extends (...args: never[]) => unknown>(name: keyof typeof asked, call: F) =>
    ((...args: Parameters<F>) => {
      asked[name].push(String(args[0]));
      return call(...args);
    }) as unknown as F;
  Object.assign(promises, {
    stat: counted('stat', original.stat),
    readdir: counted('readdir', original.readdir),
    readFile: counted('readFile', original.readFile),
  });
  try {
    return { result: await work(), asked };
  } finally {
    Object.assign(promises, original);
  }
}

const isLoose = (file: string) => /objects\/[0-9a-f]{2}\//.test(file);

const read = async (fs: typeof gitFs, gitdir: string, oid: string, cache: object) =>
  Buffer.from(
    (await git.readObject({ fs, gitdir, oid, format: 'content', cache })).object as Uint8Array,
  ).toString();

describe('createPackReadFs', () => {
  it('reads what Node reads, asking for the gitdir and the packs once, and no loose object', async () => {
    const texts = Array.from({ length: 12 }, (_, index) => `kind: ConfigMap\nname: cm-${index}\n`);
    const { gitdir, oids } = await repository('packed', texts);
    const fs = createPackReadFs(gitdir);
    const cache = {};
    const through = await calls(() => Promise.all(oids.map((oid) => read(fs, gitdir, oid, cache))));
    expect(through.result).toEqual(texts);
    expect(through.asked.stat.filter((file) => file === gitdir)).toHaveLength(1);
    expect(through.asked.readdir.filter((file) => file === join(gitdir, 'objects', 'pack'))).toHaveLength(1);
    expect(through.asked.readFile.filter(isLoose)).toEqual([]);

    // Through Node's file system directly, each object costs a failed read of its loose file.
    const direct = await calls(() => Promise.all(oids.map((oid) => read(gitFs, gitdir, oid, {}))));
    expect(direct.result).toEqual(texts);
    expect(direct.asked.readFile.filter(isLoose)).toHaveLength(oids.length);
  });

  it('still reads loose objects where the repository has them', async () => {
    const { gitdir, oids } = await repository('loose', ['kind: Secret\n', 'kind: Service\n'], true);
    const fs = createPackReadFs(gitdir);
    const cache = {};
    expect(await read(fs, gitdir, oids[0] ?? '', cache)).toBe('kind: Secret\n');
    expect(await read(fs, gitdir, oids[1] ?? '', cache)).toBe('kind: Service\n');
  });

  it('does not keep a failed listing: the packs written after it are found', async () => {
    const gitdir = join(dir, 'later');
    const fs = createPackReadFs(gitdir);
    const missing = await git
      .readObject({ fs, gitdir, oid: 'a'.repeat(40), cache: {} })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(Error);
    const { oids } = await repository('later', ['kind: Namespace\n']);
    expect(await read(fs, gitdir, oids[0] ?? '', {})).toBe('kind: Namespace\n');
  });
});
