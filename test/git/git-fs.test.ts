import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { gitFs } from '../../src/git/git-fs.js';

describe('the file system given to isomorphic-git', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'git-fs-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("answers isomorphic-git's promise probe (readFile without a path) without building an error", async () => {
    const probe = gitFs.readFile();
    expect(probe).toBeInstanceOf(Promise);
    await expect(probe).resolves.toBeUndefined();
  });

  it('reads files with a path as Node does, missing ones with ENOENT', async () => {
    await writeFile(join(dir, 'a'), 'text');
    expect(String(await gitFs.readFile(join(dir, 'a')))).toBe('text');
    await expect(gitFs.readFile(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is taken by isomorphic-git as a promise file system: a repository is written and read back', async () => {
    await git.init({ fs: gitFs, dir });
    await writeFile(join(dir, 'f.yaml'), 'k: v\n');
    await git.add({ fs: gitFs, dir, filepath: 'f.yaml' });
    const oid = await git.commit({
      fs: gitFs,
      dir,
      message: 'one',
      author: { name: 'test', email: 'test@example.com' },
    });
    const { blob } = await git.readBlob({ fs: gitFs, dir, oid, filepath: 'f.yaml' });
    expect(Buffer.from(blob).toString()).toBe('k: v\n');
  });
});
