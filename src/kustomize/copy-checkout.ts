import { copyFile, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * A checkout on disk copied into `into` (an empty directory private to one build), as
 * materializeCommitTree writes out a commit, for the build to decrypt the files it reads in the copy
 * while the checkout stays as it is. `.git` is left out (kustomize never reads it); a link is copied
 * as a link, for kustomize's pre-scan to judge where it leads; anything else that is not a file or a
 * directory (a socket, a device) is left out.
 */
export async function copyCheckout(
  from: string,
  into: string,
  { signal }: { readonly signal?: AbortSignal },
): Promise<void> {
  const walk = async (relative: string): Promise<void> => {
    signal?.throwIfAborted();
    const entries = await readdir(path.join(from, relative), { withFileTypes: true });
    for (const entry of entries) {
      if (relative === '' && entry.name === '.git') continue;
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      const source = path.join(from, child);
      const target = path.join(into, child);
      if (entry.isDirectory()) {
        await mkdir(target);
        await walk(child);
      } else if (entry.isSymbolicLink()) {
        await symlink(await readlink(source), target);
      } else if (entry.isFile()) {
        await copyFile(source, target);
      }
    }
  };
  await walk('');
}
