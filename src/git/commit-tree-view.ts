import { GitUnsafeTreeError } from './git-error.js';
import { joinPath, parseTreeObject, type TreeEntry } from './parse-tree-object.js';

/** Reads objects of one repository by sha; the object store or, in tests, a map. */
export interface GitObjectReader {
  read(oid: string): Promise<{ readonly type: string; readonly content: Uint8Array }>;
  /**
   * Trees already parsed and checked, kept across reads of the repository: a tree object never
   * changes, so a tree that passed the checks once passes them again (one that fails is never kept).
   */
  readonly parsedTrees?: ParsedTreeCache;
}

/**
 * A tree's checked entries. A lookup by name scans a small tree; a larger one is indexed by name on its
 * first lookup (see entryNamed). Most trees of a fleet are small: an index made for each of them cost
 * 2.5 MiB at 10,000 ApplySets (docs/performance.md).
 */
export interface ParsedTree {
  readonly entries: readonly TreeEntry[];
  index?: Map<string, TreeEntry>;
}

export interface ParsedTreeCache {
  get(oid: string): ParsedTree | undefined;
  set(oid: string, tree: ParsedTree): void;
}

/** What a path of the commit names once its links are followed, by where it really is. */
export type ResolvedPath =
  | { readonly kind: 'tree'; readonly oid: string; readonly path: string }
  | { readonly kind: 'blob'; readonly oid: string; readonly path: string }
  | { readonly kind: 'gitlink'; readonly path: string };

export interface CommitTreeView {
  /** The checked entries of the tree `oid` found at `dirPath`, in byte order of their names. */
  list(oid: string, dirPath: string): Promise<readonly TreeEntry[]>;
  /** The content of the blob `oid`, listed at `entryPath`. */
  readBlob(oid: string, entryPath: string): Promise<Uint8Array>;
  /** Follows `segments` from the root, resolving links inside the tree; undefined when nothing is there. */
  resolve(segments: readonly string[]): Promise<ResolvedPath | undefined>;
}

/** Linux's MAXSYMLINKS: how many links one path may pass through before it counts as a loop. */
const MAX_SYMLINK_HOPS = 40;

/**
 * Path components one resolution may look up (Linux's PATH_MAX is 4096 bytes): a link target is any
 * blob, and 40 links of 100,000 components each would be four million lookups for one entry.
 */
const MAX_RESOLVED_SEGMENTS = 4096;

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A tree of fewer entries is small: a lookup by name scans it, and the tree caches do not keep it (it is
 * parsed again, from the inflated object, faster than its entries are worth keeping for a fleet: 10,000
 * ApplySets' directories of 4 files were 6 MiB of parsed trees).
 */
export const SMALL_TREE_ENTRIES = 32;

function entryNamed(tree: ParsedTree, name: string): TreeEntry | undefined {
  if (tree.entries.length < SMALL_TREE_ENTRIES) return tree.entries.find((entry) => entry.name === name);
  tree.index ??= new Map(tree.entries.map((entry) => [entry.name, entry]));
  return tree.index.get(name);
}

/**
 * The tree of one commit, read object by object: each object once, each tree parsed and checked once
 * (see parseTreeObject), and symbolic links resolved inside the tree only. A link's target must be
 * relative and free of `..`, and is looked up from the link's own directory, so a repository can never
 * name anything but its own files.
 */
export function createCommitTreeView(input: {
  readonly reader: GitObjectReader;
  /** The commit's root tree. */
  readonly tree: string;
  readonly signal?: AbortSignal;
}): CommitTreeView {
  const { reader, signal } = input;
  const objects = new Map<string, { readonly type: string; readonly content: Uint8Array }>();
  const trees: ParsedTreeCache = reader.parsedTrees ?? new Map<string, ParsedTree>();

  const readTyped = async (oid: string, type: string, entryPath: string): Promise<Uint8Array> => {
    signal?.throwIfAborted();
    const object = objects.get(oid) ?? (await reader.read(oid));
    objects.set(oid, object);
    if (object.type !== type) {
      throw new GitUnsafeTreeError(entryPath, `is listed as a ${type} but its object is a ${object.type}`);
    }
    return object.content;
  };

  // This view's own parsed trees: the small ones the shared cache does not keep are parsed once a view.
  const local = new Map<string, ParsedTree>();
  const parsed = async (oid: string, dirPath: string) => {
    const cached = trees.get(oid) ?? local.get(oid);
    if (cached !== undefined) return cached;
    const entries = parseTreeObject(await readTyped(oid, 'tree', dirPath === '' ? '/' : dirPath), dirPath);
    const tree: ParsedTree = { entries };
    trees.set(oid, tree);
    local.set(oid, tree);
    return tree;
  };

  const resolve = async (segments: readonly string[]): Promise<ResolvedPath | undefined> => {
    const pending = [...segments];
    let current: ResolvedPath = { kind: 'tree', oid: input.tree, path: '' };
    let hops = 0;
    let looked = 0;
    for (let segment = pending.shift(); segment !== undefined; segment = pending.shift()) {
      if (current.kind !== 'tree') return undefined;
      const entryPath = joinPath(current.path, segment);
      looked += 1;
      if (looked > MAX_RESOLVED_SEGMENTS) {
        throw new GitUnsafeTreeError(
          entryPath,
          `is reached through more than ${MAX_RESOLVED_SEGMENTS} names`,
        );
      }
      const entry = entryNamed(await parsed(current.oid, current.path), segment);
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

  return {
    list: async (oid, dirPath) => (await parsed(oid, dirPath)).entries,
    readBlob: (oid, entryPath) => readTyped(oid, 'blob', entryPath),
    resolve,
  };
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
  // Only '/' separates: git stores link targets as POSIX paths, and a '\' is part of a name.
  const segments = target.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) {
    throw refuse("which contains '..' (links may only point below their directory)");
  }
  return segments;
}

/**
 * What a tree entry at `entryPath` is, a link followed inside the commit (see resolve); undefined for a
 * link that names nothing in the commit, which each walker refuses or skips in its own way.
 */
export async function entryTarget(
  view: CommitTreeView,
  entry: TreeEntry,
  entryPath: string,
): Promise<ResolvedPath | undefined> {
  switch (entry.kind) {
    case 'tree':
      return { kind: 'tree', oid: entry.oid, path: entryPath };
    case 'gitlink':
      return { kind: 'gitlink', path: entryPath };
    case 'file':
    case 'executable':
      return { kind: 'blob', oid: entry.oid, path: entryPath };
    case 'symlink':
      return view.resolve(entryPath.split('/'));
  }
}
