import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_GIT_FETCH_LIMITS } from '../../src/git/git-fetch-limits.js';
import { scanPack } from '../../src/git/pack-scan.js';

// Packs made by the git CLI as a server's upload-pack makes them (ofs-deltas, chains of them), indexed
// here and by `git index-pack`: the two indexes must be the same bytes.

let dir: string;

/** The index scanPack makes of `pack`, within the default limits. */
async function indexPack(pack: Uint8Array, baseCacheBytes?: number): Promise<Buffer | undefined> {
  return (await scanPack(pack, DEFAULT_GIT_FETCH_LIMITS, { index: true, baseCacheBytes })).index;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pack-index-test-'));
  const work = path.join(dir, 'work');
  await mkdir(work);
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
  git('init', '-q', '-b', 'main');
  // Files alike enough that git stores most as deltas of one another, over three commits, so that
  // deltas have deltas as bases.
  for (let commit = 0; commit < 3; commit += 1) {
    for (let i = 0; i < 300; i += 1) {
      const lines = Array.from({ length: 40 }, (_, line) => `line ${line}: value ${(line * i) % 5}`);
      await mkdir(path.join(work, `set-${i}`), { recursive: true });
      await writeFile(
        path.join(work, `set-${i}`, 'deployment.yaml'),
        `${lines.join('\n')}\nname: s${i}\ncommit: ${commit}\n`,
      );
    }
    await writeFile(path.join(work, 'large.bin'), Buffer.alloc(200_000, commit));
    git('add', '.');
    git('commit', '-q', '-m', `commit ${commit}`);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A pack of every object of the repository, as `git pack-objects` writes it with these flags. */
function packOf(...flags: string[]): Buffer {
  const objects = execFileSync('git', ['-C', path.join(dir, 'work'), 'rev-list', '--objects', '--all']);
  return execFileSync('git', ['-C', path.join(dir, 'work'), 'pack-objects', '--stdout', ...flags], {
    input: objects,
    maxBuffer: 1 << 28,
  });
}

/** What `git index-pack` writes for the pack. */
async function gitIndexOf(pack: Buffer, name: string): Promise<Buffer> {
  const file = path.join(dir, `${name}.pack`);
  await writeFile(file, pack);
  execFileSync('git', ['index-pack', file], { cwd: dir });
  return readFile(path.join(dir, `${name}.idx`));
}

/** How many of the pack's entries are deltas, and how deep the deepest chain is (`git verify-pack -v`). */
async function deltaShape(pack: Buffer, name: string): Promise<{ deltas: number; depth: number }> {
  await gitIndexOf(pack, name);
  const lines = execFileSync('git', ['verify-pack', '-v', path.join(dir, `${name}.idx`)])
    .toString()
    .split('\n')
    .map((line) => line.split(/\s+/))
    .filter((fields) => fields.length === 7 && /^[0-9a-f]{40}$/.test(fields[0] ?? ''));
  return { deltas: lines.length, depth: Math.max(...lines.map((fields) => Number(fields[5]))) };
}

describe('scanPack, indexing', () => {
  it('writes the index git index-pack writes, for a pack of ofs-deltas in chains', async () => {
    const pack = packOf('--delta-base-offset');
    const shape = await deltaShape(pack, 'shape');
    expect(shape.deltas).toBeGreaterThan(50);
    expect(shape.depth).toBeGreaterThan(2);
    expect(await indexPack(pack)).toEqual(await gitIndexOf(pack, 'chains'));
  });

  it('writes the same index when the bases do not stay in memory and are inflated again', async () => {
    const pack = packOf('--delta-base-offset');
    expect(await indexPack(pack, 1024)).toEqual(await gitIndexOf(pack, 'small-cache'));
  });

  it('writes the index of a pack without deltas', async () => {
    const pack = packOf('--delta-base-offset', '--window=0');
    expect((await deltaShape(pack, 'flat-shape')).deltas).toBe(0);
    expect(await indexPack(pack)).toEqual(await gitIndexOf(pack, 'flat'));
  });

  it('leaves a pack of ref-deltas (bases named by oid) to isomorphic-git', async () => {
    const pack = packOf();
    expect((await deltaShape(pack, 'ref-shape')).deltas).toBeGreaterThan(0);
    await expect(indexPack(pack)).resolves.toBeUndefined();
  });

  it('indexes no pack that does not match its checksum, or is cut short', async () => {
    const pack = packOf('--delta-base-offset');
    const flipped = Buffer.from(pack);
    flipped[pack.length - 100] = flipped[pack.length - 100]! ^ 0xff;
    await expect(indexPack(flipped)).resolves.toBeUndefined();
    await expect(indexPack(pack.subarray(0, pack.length - 1000))).resolves.toBeUndefined();
    await expect(
      indexPack(Buffer.from('not a pack at all, but long enough to be read')),
    ).resolves.toBeUndefined();
  });

  it('makes no index of a pack that breaks a limit, and says which it breaks', async () => {
    const pack = packOf('--delta-base-offset');
    const limits = { ...DEFAULT_GIT_FETCH_LIMITS, maxFetchObjects: 3 };
    const scan = await scanPack(pack, limits, { index: true });
    expect(scan.refusal).toMatch(
      /^the pack holds \d+ objects, more than the 3 objects \(--git-max-fetch-objects\)/,
    );
    expect(scan.index).toBeUndefined();
  });

  it('indexes no pack whose data is damaged under a checksum made to match', async () => {
    const pack = packOf('--delta-base-offset');
    const body = Buffer.from(pack.subarray(0, pack.length - 20));
    body[Math.floor(body.length / 2)] = body[Math.floor(body.length / 2)]! ^ 0xff;
    const resealed = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    await expect(indexPack(resealed)).resolves.toBeUndefined();
  });
});
