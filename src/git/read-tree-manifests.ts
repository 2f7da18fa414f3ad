import path from 'node:path';
import {
  createManifestReadBudget,
  manifestLimits,
  type ManifestLimits,
} from '../manifests/manifest-limits.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import { GitPathNotFoundError, GitUnsafeTreeError } from './git-error.js';
import { joinPath, parseTreeObject, type TreeEntry } from './parse-tree-object.js';
import { sourcePathSegments } from './source-path-segments.js';

/** Reads objects of one repository by sha; the object store or, in tests, a map. */
export interface GitObjectReader {
  read(oid: string): Promise<{ readonly type: string; readonly content: Uint8Array }>;
}

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

/** Linux's MAXSYMLINKS: how many links one path may pass through before it counts as a loop. */
const MAX_SYMLINK_HOPS = 40;

/**
 * How many entries one read may walk. Git stores a subtree once however often it is listed, so a pack of
 * a few kilobytes can hold a tree of 100 entries each naming a tree of 100 entries … and a walk of
 * billions of entries (of empty files, which the size limits do not see), on trees already parsed: no
 * I/O, so no abort could interrupt it. Far above any real directory of manifests.
 */
export const MAX_WALKED_ENTRIES = 200_000;

type Resolved =
  | { readonly kind: 'tree'; readonly oid: string; readonly path: string }
  | { readonly kind: 'blob'; readonly oid: string; readonly path: string }
  | { readonly kind: 'gitlink'; readonly path: string };

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The manifest files under `sourcePath` in a commit, read from the object store without ever writing
 * the tree to disk, the way `kubectl apply -f DIR -R` would read a checkout of it: every `.yaml`, `.yml`
 * and `.json` file, depth first, each directory's entries in byte order of their names, paths relative
 * to `sourcePath`; a `sourcePath` naming a file is read whatever its extension (`kubectl apply -f FILE`).
 *
 * Symbolic links are resolved inside the commit's tree only: a target must be relative and free of
 * `..`, and is looked up from the link's own directory, so a repository can never name anything but
 * its own files. A target that is absolute, climbs, loops or names nothing refuses the whole read,
 * naming the link. Each directory is walked once (a link to a directory already walked is skipped), so
 * a link to an ancestor terminates. Submodules (gitlinks) are skipped: their files live in another
 * repository, which is not fetched, as a checkout would leave them an empty directory.
 *
 * Each file's size is checked before its bytes are decoded to text, as the directory reader checks it:
 * a file over the limit is listed unread, for `parseManifestSet` to refuse naming it, and once the set
 * is over its total nothing more is read. isomorphic-git hands out a blob only whole, inflated; its
 * fetch has already inflated every object of the pack to index it, so checking the size in the pack's
 * object header first would not bound memory any better.
 */
export async function readTreeManifests(input: ReadTreeManifestsInput): Promise<ManifestFile[]> {
  const { reader, commit, signal } = input;
  const trees = new Map<string, TreeEntry[]>();
  const budget = createManifestReadBudget(manifestLimits(input.limits));

  const listTree = async (oid: string, dirPath: string): Promise<TreeEntry[]> => {
    const cached = trees.get(oid);
    if (cached !== undefined) return cached;
    const content = await readTyped(oid, 'tree', dirPath === '' ? '/' : dirPath);
    const entries = parseTreeObject(content, dirPath);
    trees.set(oid, entries);
    return entries;
  };

  // One read per object: a blob listed under many names (the same file in many directories) costs one.
  const objects = new Map<string, { readonly type: string; readonly content: Uint8Array }>();
  const readTyped = async (oid: string, type: string, entryPath: string): Promise<Uint8Array> => {
    signal?.throwIfAborted();
    const object = objects.get(oid) ?? (await reader.read(oid));
    objects.set(oid, object);
    if (object.type !== type) {
      throw new GitUnsafeTreeError(entryPath, `is listed as a ${type} but its object is a ${object.type}`);
    }
    return object.content;
  };

  /** Follows `segments` from the root, resolving links inside the tree; undefined when nothing is there. */
  const resolve = async (segments: readonly string[]): Promise<Resolved | undefined> => {
    const pending = [...segments];
    let current: Resolved = { kind: 'tree', oid: input.tree, path: '' };
    let hops = 0;
    for (let segment = pending.shift(); segment !== undefined; segment = pending.shift()) {
      if (current.kind !== 'tree') return undefined;
      const entryPath = joinPath(current.path, segment);
      const entries: TreeEntry[] = await listTree(current.oid, current.path);
      const entry = entries.find((e) => e.name === segment);
      if (entry === undefined) return undefined;
      if (entry.kind === 'symlink') {
        hops += 1;
        if (hops > MAX_SYMLINK_HOPS) {
          throw new GitUnsafeTreeError(
            entryPath,
            `passes through more than ${MAX_SYMLINK_HOPS} links (a loop)`,
          );
        }
        const target = utf8.decode(await readTyped(entry.oid, 'blob', entryPath));
        pending.unshift(...linkTargetSegments(entryPath, target));
      } else if (entry.kind === 'tree') current = { kind: 'tree', oid: entry.oid, path: entryPath };
      else if (entry.kind === 'gitlink') current = { kind: 'gitlink', path: entryPath };
      else current = { kind: 'blob', oid: entry.oid, path: entryPath };
    }
    return current;
  };

  const readFile = async (oid: string, entryPath: string, filePath: string): Promise<ManifestFile> => {
    const content = await readTyped(oid, 'blob', entryPath);
    const byteLength = content.length;
    return budget.refuse(filePath, byteLength) ?? { path: filePath, text: utf8.decode(content), byteLength };
  };

  const segments = sourcePathSegments(input.sourcePath);
  const sourcePath = input.sourcePath ?? '';
  const root = await resolve(segments);
  if (root === undefined) throw new GitPathNotFoundError(sourcePath, commit);
  if (root.kind === 'gitlink') {
    throw new GitPathNotFoundError(sourcePath, commit, 'submodule');
  }
  if (root.kind === 'blob') {
    const name = segments[segments.length - 1] ?? root.path;
    return [await readFile(root.oid, root.path, name)];
  }

  const files: ManifestFile[] = [];
  const visited = new Set<string>([root.path]);
  let walked = 0;
  const walk = async (tree: string, treePath: string, relative: string): Promise<void> => {
    for (const entry of await listTree(tree, treePath)) {
      if (budget.exhausted) return;
      walked += 1;
      if (walked > MAX_WALKED_ENTRIES) {
        throw new GitUnsafeTreeError(
          root.path === '' ? '/' : root.path,
          `holds more than ${MAX_WALKED_ENTRIES} entries (a subtree listed many times counts each time)`,
        );
      }
      const entryPath = joinPath(treePath, entry.name);
      const relativePath = joinPath(relative, entry.name);
      let target: Resolved | undefined;
      if (entry.kind === 'symlink') {
        target = await resolve(entryPath.split('/'));
        if (target === undefined) {
          const text = utf8.decode(await readTyped(entry.oid, 'blob', entryPath));
          throw new GitUnsafeTreeError(
            entryPath,
            `is a link to ${JSON.stringify(text)}, which is not in the commit`,
          );
        }
      } else if (entry.kind === 'tree') target = { kind: 'tree', oid: entry.oid, path: entryPath };
      else if (entry.kind === 'gitlink') target = { kind: 'gitlink', path: entryPath };
      else target = { kind: 'blob', oid: entry.oid, path: entryPath };

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

/**
 * The components of a link's target, refused unless it stays below the link's own directory: git
 * stores any bytes as a target, and following `/etc/passwd` or `../../other-tenant` would read outside
 * the repository.
 */
function linkTargetSegments(linkPath: string, target: string): string[] {
  const refuse = (detail: string) =>
    new GitUnsafeTreeError(linkPath, `is a link to ${JSON.stringify(target)}, ${detail}`);
  if (target === '') throw refuse('which is empty');
  if (target.includes('\0')) throw refuse('which contains a NUL byte');
  if (target.startsWith('/')) throw refuse('which is absolute (links must stay inside the repository)');
  // Only '/' separates: git stores link targets as POSIX paths, and a '\\' is part of a name.
  const segments = target.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..'))
    throw refuse("which contains '..' (links may only point below their directory)");
  return segments;
}

function isManifestName(name: string): boolean {
  return MANIFEST_EXTENSIONS.has(path.posix.extname(name).toLowerCase());
}
