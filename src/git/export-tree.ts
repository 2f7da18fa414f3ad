import git from 'isomorphic-git';
import fs from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface ExportTreeOptions {
  readonly gitdir: string;
  /** The tree object to write out. */
  readonly tree: string;
  /** An empty directory to write into. */
  readonly dir: string;
  /** isomorphic-git's object cache, shared with the fetch that precedes this. */
  readonly cache: object;
  readonly signal: AbortSignal;
}

/**
 * Writes a tree from the object store into `dir`, as `git checkout` would without an index: files with
 * their executable bit, symbolic links as links (the manifest reader follows only those that stay inside
 * the checkout), submodules as empty directories. Entry names that could leave `dir` are refused, since
 * a crafted tree object can hold any name.
 */
export async function exportTree(options: ExportTreeOptions): Promise<void> {
  const { gitdir, cache, signal } = options;
  const write = async (treeOid: string, dir: string): Promise<void> => {
    signal.throwIfAborted();
    const { tree } = await git.readTree({ fs, gitdir, oid: treeOid, cache });
    for (const entry of tree) {
      if (!isSafeEntryName(entry.path)) {
        throw new Error(`tree ${treeOid} has an unsafe entry name ${JSON.stringify(entry.path)}`);
      }
      const target = path.join(dir, entry.path);
      switch (entry.type) {
        case 'tree':
          await mkdir(target);
          await write(entry.oid, target);
          break;
        case 'commit':
          await mkdir(target);
          break;
        case 'blob': {
          const { blob } = await git.readBlob({ fs, gitdir, oid: entry.oid, cache });
          if (entry.mode === '120000') await symlink(Buffer.from(blob).toString('utf8'), target);
          else await writeFile(target, blob, { mode: entry.mode === '100755' ? 0o755 : 0o644, signal });
          break;
        }
      }
    }
  };
  await write(options.tree, options.dir);
}

function isSafeEntryName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}
