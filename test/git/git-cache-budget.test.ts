import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GitCacheBudget } from '../../src/git/git-cache-budget.js';
import { KeyedReadWriteLock } from '../../src/git/keyed-read-write-lock.js';

// The Git cache's budget counts and removes repositories. The extracted OCI artifacts share its
// directory (as `.oci-artifacts`, bounded by their own budget): the Git budget must leave them alone.

describe('the Git cache budget', () => {
  let cacheDir: string;
  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(tmpdir(), 'git-cache-budget-'));
  });
  afterEach(() => rm(cacheDir, { recursive: true, force: true }));

  it('removes the repositories a previous process left past the budget, and no dot directory', async () => {
    for (const name of ['old-repo', '.oci-artifacts/sha256-abc']) {
      await mkdir(path.join(cacheDir, name), { recursive: true });
      await writeFile(path.join(cacheDir, name, 'data'), Buffer.alloc(4096));
    }
    const removed: string[] = [];
    const budget = new GitCacheBudget({
      cacheDir,
      maxBytes: 1024,
      maxRepositoryBytes: 1024 * 1024,
      lock: new KeyedReadWriteLock(),
      onRemoved: (key) => removed.push(key),
    });
    await budget.evict('new-repo');
    expect(removed).toEqual(['old-repo']);
    expect(await readdir(cacheDir)).toEqual(['.oci-artifacts']);
  });
});
