import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createPackObjectStore } from '../../src/git/pack-object-store.js';

// Repositories written and packed by the git CLI; every object read through the store must be what
// `git cat-file` prints for it.

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pack-object-store-test-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): Buffer {
  return execFileSync('git', ['-C', cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    maxBuffer: 1 << 28,
  });
}

/** A repository of similar files over a few commits (so that git stores deltas of deltas). */
async function repository(commits: number): Promise<string> {
  const work = path.join(dir, 'work');
  await mkdir(work, { recursive: true });
  git(work, 'init', '-q', '-b', 'main');
  for (let commit = 0; commit < commits; commit += 1) {
    for (let i = 0; i < 200; i += 1) {
      const lines = Array.from({ length: 30 }, (_, line) => `line ${line}: ${(line * i) % 5}`);
      await mkdir(path.join(work, `set-${i}`), { recursive: true });
      await writeFile(
        path.join(work, `set-${i}`, 'a.yaml'),
        `${lines.join('\n')}\nname: s${i}\ncommit: ${commit}\n`,
      );
    }
    git(work, 'add', '.');
    git(work, 'commit', '-q', '-m', `commit ${commit}`);
  }
  return work;
}

/** A bare copy of `work` whose objects are in packs only, written by `git repack` with these flags. */
function packedCopy(work: string, name: string, ...flags: string[]): string {
  const bare = path.join(dir, name);
  execFileSync('git', ['clone', '-q', '--bare', '--no-local', work, bare]);
  git(bare, 'repack', '-a', '-d', ...flags);
  return bare;
}

function objectsOf(work: string): string[] {
  return git(work, 'rev-list', '--objects', '--all')
    .toString()
    .trim()
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '');
}

/** Every object as `git cat-file --batch` prints it: its type and content. */
function gitObjects(gitdir: string, oids: readonly string[]): Map<string, { type: string; content: Buffer }> {
  const out = execFileSync('git', ['-C', gitdir, 'cat-file', '--batch'], {
    input: `${oids.join('\n')}\n`,
    maxBuffer: 1 << 28,
  });
  const objects = new Map<string, { type: string; content: Buffer }>();
  let at = 0;
  while (at < out.length) {
    const lineEnd = out.indexOf(10, at);
    const [oid = '', type = '', size = '0'] = out.toString('latin1', at, lineEnd).split(' ');
    const start = lineEnd + 1;
    objects.set(oid, { type, content: out.subarray(start, start + Number(size)) });
    at = start + Number(size) + 1;
  }
  return objects;
}

async function expectAllAsGitReadsThem(gitdir: string, oids: readonly string[]): Promise<void> {
  const store = createPackObjectStore(gitdir);
  const expected = gitObjects(gitdir, oids);
  expect(expected.size).toBe(new Set(oids).size);
  for (const oid of oids) {
    const object = await store.read(oid);
    const asGit = expected.get(oid);
    expect(object?.type).toBe(asGit?.type);
    expect(object?.content.equals(asGit?.content ?? Buffer.alloc(0))).toBe(true);
  }
}

describe('the pack object store', () => {
  it('reads every object of a pack of ofs-delta chains as git does', async () => {
    const work = await repository(4);
    const bare = packedCopy(work, 'ofs.git', '-f', '--depth=50', '--window=50');
    const depths = git(bare, 'verify-pack', '-v', ...(await packIndexes(bare)))
      .toString()
      .split('\n')
      .map((line) => line.split(/\s+/))
      .filter((fields) => fields.length === 7)
      .map((fields) => Number(fields[5]));
    expect(Math.max(...depths)).toBeGreaterThan(2);
    await expectAllAsGitReadsThem(bare, objectsOf(work));
  });

  it('reads ref-deltas, and objects spread over several packs', async () => {
    const work = await repository(2);
    // Bases named by oid: what git writes without the ofs-delta encoding.
    const bare = packedCopy(work, 'ref.git', '-f');
    git(bare, 'config', 'repack.useDeltaBaseOffset', 'false');
    git(bare, 'repack', '-a', '-d', '-f');
    const first = git(bare, 'verify-pack', '-v', ...(await packIndexes(bare))).toString();
    expect(first).toMatch(/ [0-9a-f]{40}\n/);
    // A second pack beside the first: the objects of a new commit, packed on their own.
    for (let i = 0; i < 20; i += 1) await writeFile(path.join(work, `set-${i}`, 'a.yaml'), `changed ${i}\n`);
    git(work, 'commit', '-q', '-am', 'more');
    git(work, 'push', '-q', bare, 'main');
    git(bare, 'repack', '-d');
    expect((await packIndexes(bare)).length).toBe(2);
    await expectAllAsGitReadsThem(bare, objectsOf(work));
  });

  it('answers undefined for an object no pack holds, loose or absent', async () => {
    const work = await repository(1);
    const bare = packedCopy(work, 'loose.git');
    const loose = execFileSync('git', ['-C', bare, 'hash-object', '-w', '--stdin'], { input: 'loose\n' })
      .toString()
      .trim();
    const store = createPackObjectStore(bare);
    await expect(store.read(loose)).resolves.toBeUndefined();
    await expect(store.read('f'.repeat(40))).resolves.toBeUndefined();
    await expect(store.read('not an oid')).resolves.toBeUndefined();
  });

  it('answers undefined for a repository without packs', async () => {
    await expect(createPackObjectStore(path.join(dir, 'none')).read('a'.repeat(40))).resolves.toBeUndefined();
  });
});

async function packIndexes(gitdir: string): Promise<string[]> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  return (await readdir(packDir))
    .filter((name) => name.endsWith('.idx'))
    .map((name) => path.join(packDir, name));
}
