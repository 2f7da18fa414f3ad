import git from 'isomorphic-git';
import type { ManifestLimits, ManifestFile } from '../manifests/manifest-limits.js';
import { GitFetchError } from './git-error.js';
import { hasErrorCode } from './has-error-code.js';
import { createCommitTreeView, type CommitTreeView } from './commit-tree-view.js';
import { readTreeManifests, type GitObjectReader } from './read-tree-manifests.js';
import type { GitObjectContent, RepositoryReadCache } from './repository-object-caches.js';

export interface CachedManifestsRequest {
  /** The cache's bare repository the commit was fetched into. */
  readonly gitdir: string;
  /**
   * What reads of this repository share between two fetches (the caller drops it when a fetch runs):
   * pack indexes and packs are loaded, and trees parsed, once, not once per read.
   */
  readonly readCache: RepositoryReadCache;
  /** The repository URL without credentials, for messages. */
  readonly url: string;
  readonly commit: string;
  /** A directory (read recursively) or a file, relative to the repository root; default the root. */
  readonly path: string | undefined;
  readonly limits?: Partial<ManifestLimits>;
  readonly signal?: AbortSignal;
}

/**
 * The manifest files under `path` at `commit`, read from the bare repository's objects: nothing is
 * written out as files, so no name or link in the repository can reach outside it. The caller holds
 * the repository's lock, so a fetch that starts the cache over never removes objects under the read.
 */
export async function readCachedManifests(request: CachedManifestsRequest): Promise<ManifestFile[]> {
  const { limits, signal } = request;
  return readCommitManifests(await openCachedCommit(request), request.path, {
    ...(limits === undefined ? {} : { limits }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/**
 * The manifest files under `path` of a commit already opened, as readCachedManifests reads them: a
 * caller that holds the lock for more than this read (readCommitTree) reads them in the same pass.
 */
export function readCommitManifests(
  { reader, commit, tree }: CachedCommit,
  path: string | undefined,
  options: { readonly limits?: Partial<ManifestLimits>; readonly signal?: AbortSignal } = {},
): Promise<ManifestFile[]> {
  return readTreeManifests({ reader, commit, tree, sourcePath: path, ...options });
}

/** A commit of the cache, opened for reading: its root tree, the tree's view and its objects. */
export interface CachedCommit {
  readonly commit: string;
  /** The commit's root tree. */
  readonly tree: string;
  readonly view: CommitTreeView;
  readonly reader: GitObjectReader;
}

/**
 * The commit's tree as a view over the bare repository's objects (see readCachedManifests for the lock
 * the caller holds). GitFetchError when the commit has left the cache since its fetch.
 */
export async function openCachedCommit(
  request: Omit<CachedManifestsRequest, 'path' | 'limits'>,
): Promise<CachedCommit> {
  const { gitdir, url, commit, signal } = request;
  const reader = objectStoreReader(gitdir, request.readCache);
  let object: GitObjectContent;
  try {
    object = await reader.read(commit);
  } catch (error) {
    if (!hasErrorCode(error, 'NotFoundError')) throw error;
    throw new GitFetchError(url, `commit ${commit} is no longer in the cache`, { cause: error });
  }
  const tree = object.type === 'commit' ? treeOfCommit(object.content) : undefined;
  if (tree === undefined) throw new GitFetchError(url, `${commit} is not a commit object`);
  const view = createCommitTreeView({ reader, tree, ...(signal === undefined ? {} : { signal }) });
  return { commit, tree, view, reader };
}

/**
 * Objects of the bare repository at `gitdir`: from the inflated objects kept across fetches, else read
 * from its packs (and kept), else (a loose object, or none) by isomorphic-git, which also says what is
 * missing or damaged.
 */
function objectStoreReader(gitdir: string, shared: RepositoryReadCache): GitObjectReader {
  const cache = shared.objects;
  return {
    parsedTrees: shared.trees,
    read: async (oid) => {
      const kept = shared.contents.get(oid);
      if (kept !== undefined) return kept;
      let read: GitObjectContent | undefined = await shared.packs.read(oid);
      if (read === undefined) {
        const object = await git.readObject({ fs: shared.fs, gitdir, oid, format: 'content', cache });
        read = { type: object.type, content: object.object as Uint8Array };
      }
      // The cache keeps a copy of the bytes, not this Buffer (often a view into a shared slab).
      shared.contents.set(oid, read);
      return read;
    },
  };
}

/**
 * The root tree a commit object names: its first line, `tree <oid>`, by Git's object format (git
 * writes it first, and fsck rejects a commit where it is not).
 * @internal test seam: a pure step its unit test runs alone
 */
export function treeOfCommit(content: Uint8Array): string | undefined {
  const head = Buffer.from(content.buffer, content.byteOffset, Math.min(content.byteLength, 46));
  return /^tree ([0-9a-f]{40})\n/.exec(head.toString('latin1'))?.[1];
}
