import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkManifestFileSize, manifestLimits, type ManifestLimits } from '../manifests/manifest-limits.js';
import { entryTarget, type CommitTreeView } from './commit-tree-view.js';
import { GitUnsafeTreeError } from './git-error.js';
import { joinPath } from './parse-tree-object.js';
import { MAX_WALKED_ENTRIES } from './read-tree-manifests.js';

export interface MaterializeInput {
  readonly view: CommitTreeView;
  /** The commit's root tree. */
  readonly tree: string;
  /** An empty directory of the caller's, private to this build: the repository's root is written there. */
  readonly into: string;
  /** Size limits; the defaults of `DEFAULT_MANIFEST_LIMITS` where not given. */
  readonly limits?: Partial<ManifestLimits>;
  readonly signal?: AbortSignal;
}

/** A file or the whole tree over a size limit: nothing more was written. */
export class MaterializeLimitError extends Error {
  override readonly name = 'MaterializeLimitError';
  constructor(
    /** The file's path from the repository root. */
    readonly filePath: string,
    readonly detail: string,
  ) {
    super(`${filePath}: ${detail}`);
  }
}

/**
 * Writes the whole tree of a commit under `into` as plain files and directories, read from the object
 * store as readTreeManifests reads it, for a tool that reads files (kustomize). No symbolic link is
 * written: a link is resolved inside the commit's tree (createCommitTreeView refuses one that leaves it,
 * loops or is absolute) and its target written in its place, a file's bytes or a directory's copy, so no
 * path on disk can name anything outside `into`. A link that names nothing is left out, as a checkout
 * would leave it dangling; a link to a directory it is itself inside is refused (its copy would never
 * end). Submodules become empty directories, as a checkout without them leaves them.
 *
 * Every file counts against the manifest limits (each file, and all together), since kustomize may
 * read any of them; the walk is bounded as readTreeManifests bounds it.
 */
export async function materializeCommitTree(input: MaterializeInput): Promise<void> {
  const { view, into, signal } = input;
  const limits = manifestLimits(input.limits);
  let taken = 0;
  let walked = 0;

  const writeBlob = async (oid: string, realPath: string, outPath: string): Promise<void> => {
    const bytes = await view.readBlob(oid, realPath);
    const problem = checkManifestFileSize(bytes.length, taken, limits);
    if (problem !== undefined) throw new MaterializeLimitError(outPath, problem.detail);
    taken += bytes.length;
    await writeFile(path.join(into, outPath), bytes, { mode: 0o600, flag: 'wx' });
  };

  /** Copies the tree found at `realPath` to `outPath`; `copying` holds the real paths being copied. */
  const copyTree = async (oid: string, realPath: string, outPath: string, copying: string[]) => {
    await mkdir(path.join(into, outPath), { mode: 0o700, recursive: outPath === '' });
    const stack = [...copying, realPath];
    for (const entry of await view.list(oid, realPath)) {
      signal?.throwIfAborted();
      walked += 1;
      if (walked > MAX_WALKED_ENTRIES) {
        throw new GitUnsafeTreeError(
          '/',
          `holds more than ${MAX_WALKED_ENTRIES} entries, links' copies counted`,
        );
      }
      const entryReal = joinPath(realPath, entry.name);
      const entryOut = joinPath(outPath, entry.name);
      const target = await entryTarget(view, entry, entryReal);
      if (target === undefined) continue;
      if (target.kind === 'gitlink') await mkdir(path.join(into, entryOut), { mode: 0o700 });
      else if (target.kind === 'blob') await writeBlob(target.oid, target.path, entryOut);
      else {
        const loops = stack.some(
          (inside) => target.path === '' || inside === target.path || inside.startsWith(`${target.path}/`),
        );
        if (loops) {
          throw new GitUnsafeTreeError(entryReal, 'is a link to a directory it is itself inside (a loop)');
        }
        await copyTree(target.oid, target.path, entryOut, stack);
      }
    }
  };

  await copyTree(input.tree, '', '', []);
}
