import { mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileTransform } from '../git/materialize-commit-tree.js';

/**
 * A checkout on disk copied into `into` (an empty directory private to one build), each file passed
 * through `transform` on its way, as materializeCommitTree writes out a commit: kustomize then reads
 * the copy, so a sops file a kustomization lists is read decrypted while the checkout stays as it is.
 * `.git` is left out (kustomize never reads it); a link is copied as a link, for kustomize's pre-scan
 * to judge where it leads; anything else that is not a file or a directory (a socket, a device) is
 * left out.
 */
export async function copyCheckout(
  from: string,
  into: string,
  { transform, signal }: { readonly transform: FileTransform; readonly signal?: AbortSignal },
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
        // Owner-only: a decrypted file holds what the sops file kept secret.
        await writeFile(target, await transform(child, await readFile(source)), { mode: 0o600 });
      }
    }
  };
  await walk('');
}
