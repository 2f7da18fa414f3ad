import path from 'node:path';
import {
  createManifestReadBudget,
  manifestLimits,
  type ManifestLimits,
  type ManifestFile,
} from '../manifests/manifest-limits.js';
import {
  createCommitTreeView,
  entryTarget,
  type CommitTreeView,
  type GitObjectReader,
  type ResolvedPath,
} from './commit-tree-view.js';
import { GitPathNotFoundError, GitUnsafeTreeError } from './git-error.js';
import { sourcePathSegments } from '../manifests/source-path.js';
import { joinPath, type TreeEntry } from './parse-tree-object.js';

export type { GitObjectReader } from './commit-tree-view.js';

export interface ReadTreeManifestsInput {
  readonly reader: GitObjectReader;
  /** The commit's sha, for messages. */
  readonly commit: string;
  /** The commit's root tree. */
  readonly tree: string;
  /** `spec.source.path`: a directory (read recursively) or one file. */
  readonly sourcePath: string | undefined;
  /** Size limits; the defaults of `DEFAULT_MANIFEST_LIMITS` where not given. */
  readonly limits?: Partial<ManifestLimits>;
  readonly signal?: AbortSignal;
}

const MANIFEST_EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

/**
 * How many entries one read may walk. Git stores a subtree once however often it is listed, so a pack of
 * a few kilobytes can hold a tree of 100 entries each naming a tree of 100 entries … and a walk of
 * billions of entries (of empty files, which the size limits do not see), on trees already parsed: no
 * I/O, so no abort could interrupt it. Far above any real directory of manifests.
 */
export const MAX_WALKED_ENTRIES = 200_000;

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The manifest files under `sourcePath` in a commit, read from the object store without ever writing
 * the tree to disk, the way `kubectl apply -f DIR -R` would read a checkout of it: every `.yaml`, `.yml`
 * and `.json` file, depth first, each directory's entries in byte order of their names, paths relative
 * to `sourcePath`; a `sourcePath` naming a file is read whatever its extension (`kubectl apply -f FILE`).
 *
 * Symbolic links are resolved inside the commit's tree only (see createCommitTreeView): a target that
 * is absolute, climbs, loops or names nothing refuses the whole read, naming the link. Each directory
 * is walked once, by where it really is (a link to a directory already walked is skipped), so a link to
 * an ancestor terminates. Submodules (gitlinks) are skipped: their files live in another repository,
 * which is not fetched, as a checkout would leave them an empty directory.
 *
 * Each file's size is checked before its bytes are decoded to text, as the directory reader checks it:
 * a file over the limit is listed unread, for `parseManifestSet` to refuse naming it, and once the set
 * is over its total nothing more is read. isomorphic-git hands out a blob only whole, inflated: what
 * bounds its memory is the fetch, which refused any pack holding an object over
 * `--git-max-object-bytes` by its header before the object was ever inflated (scanPack).
 */
export async function readTreeManifests(input: ReadTreeManifestsInput): Promise<ManifestFile[]> {
  const view = createCommitTreeView(input);
  const budget = createManifestReadBudget(manifestLimits(input.limits));
  const readFile = async (oid: string, entryPath: string, filePath: string): Promise<ManifestFile> => {
    const content = await view.readBlob(oid, entryPath);
    const byteLength = content.length;
    return budget.refuse(filePath, byteLength) ?? { path: filePath, text: utf8.decode(content), byteLength };
  };

  const segments = sourcePathSegments(input.sourcePath);
  const sourcePath = input.sourcePath ?? '';
  const root = await view.resolve(segments);
  if (root === undefined) throw new GitPathNotFoundError(sourcePath, input.commit);
  if (root.kind === 'gitlink') throw new GitPathNotFoundError(sourcePath, input.commit, 'submodule');
  if (root.kind === 'blob') {
    const name = segments[segments.length - 1] ?? root.path;
    return [await readFile(root.oid, root.path, name)];
  }

  const files: ManifestFile[] = [];
  const visited = new Set<string>([root.path]);
  let walked = 0;
  const walk = async (tree: string, treePath: string, relative: string): Promise<void> => {
    for (const entry of await view.list(tree, treePath)) {
      if (budget.exhausted) return;
      walked += 1;
      if (walked > MAX_WALKED_ENTRIES) {
        throw new GitUnsafeTreeError(
          root.path === '' ? '/' : root.path,
          `holds more than ${MAX_WALKED_ENTRIES} entries (a subtree listed many times counts each time)`,
        );
      }
      const relativePath = joinPath(relative, entry.name);
      const target = await targetOf(view, entry, joinPath(treePath, entry.name));
      if (target.kind === 'tree') {
        if (visited.has(target.path)) continue;
        visited.add(target.path);
        await walk(target.oid, target.path, relativePath);
      } else if (target.kind === 'blob' && isManifestName(entry.name)) {
        files.push(await readFile(target.oid, target.path, relativePath));
      }
    }
  };
  await walk(root.oid, root.path, '');
  return files;
}

/** What the entry at `entryPath` is, its link followed; a link that names nothing is refused. */
async function targetOf(view: CommitTreeView, entry: TreeEntry, entryPath: string): Promise<ResolvedPath> {
  const target = await entryTarget(view, entry, entryPath);
  if (target !== undefined) return target;
  const text = utf8.decode(await view.readBlob(entry.oid, entryPath));
  throw new GitUnsafeTreeError(entryPath, `is a link to ${JSON.stringify(text)}, which is not in the commit`);
}

function isManifestName(name: string): boolean {
  return MANIFEST_EXTENSIONS.has(path.posix.extname(name).toLowerCase());
}
