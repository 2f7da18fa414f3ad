/**
 * A commit of the shared Git cache as a revision's tree (src/source/revision-reader.ts). This is where
 * Git meets kustomize: kustomize builds a directory and knows nothing of commits.
 */
import type { CachedCommit } from '../../git/read-cached-manifests.js';
import { readCommitManifests } from '../../git/read-cached-manifests.js';
import type { GitSource } from '../../git/git-source.js';
import { materializeCommitTree, MaterializeLimitError } from '../../git/materialize-commit-tree.js';
import {
  buildMaterializedKustomization,
  kustomizeLabel,
  scheduledBuild,
} from '../../kustomize/build-kustomization.js';
import { KustomizeError } from '../../kustomize/kustomize-error.js';
import { KUSTOMIZATION_FILE_NAMES } from '../../kustomize/scan-kustomization.js';
import type { ManifestLimits } from '../../manifests/manifest-limits.js';
import { sourcePathSegments } from '../../manifests/source-path.js';
import type { RevisionContent, RevisionReader } from '../revision-reader.js';

/**
 * The commit is opened, and the repository's read lock taken, once to see whether the path holds a
 * kustomization (and to read its plain files if not); a kustomization is then built once the build
 * scheduler (`options.schedule`) lets it start, its tree copied under a read lock of its own and built
 * after the lock is released: neither a build waiting for its turn nor one running holds a worker or
 * the lock, which a fetch of the same repository (maybe another tenant's) needs.
 */
export function commitReader(
  gitSource: Pick<GitSource, 'readCommitTree'>,
  { url, commit }: { url: string; commit: string },
): RevisionReader {
  return {
    read: async (path, build) => {
      const plain = await gitSource.readCommitTree(
        { url, commit },
        async (opened): Promise<RevisionContent | undefined> =>
          (await kustomizationAt(opened, path)) === undefined
            ? { kind: 'manifests', files: await readCommitManifests(opened, path, { signal: build.signal }) }
            : undefined,
        { signal: build.signal },
      );
      if (plain !== undefined) return plain;
      const label = kustomizeLabel(path);
      const built = await scheduledBuild(build, label, (limits) =>
        buildMaterializedKustomization(
          (root, manifestLimits) =>
            gitSource.readCommitTree(
              { url, commit },
              (opened) => writeTree(opened, root, { label, limits: manifestLimits, signal: limits.signal }),
              { signal: limits.signal },
            ),
          {
            sourcePath: path,
            ...build,
            options: { ...build.options, timeoutMs: limits.timeoutMs },
            signal: limits.signal,
          },
        ),
      );
      return { kind: 'kustomization', built };
    },
  };
}

/**
 * The kustomization file at the source path of a commit (`kustomization.yaml`, `kustomization.yml`
 * or `Kustomization`, links followed); undefined when the path is a file or a directory without one,
 * which is then read as plain manifests.
 */
async function kustomizationAt(commit: CachedCommit, sourcePath: string): Promise<string | undefined> {
  const segments = sourcePathSegments(sourcePath);
  const dir = await commit.view.resolve(segments);
  if (dir?.kind !== 'tree') return undefined;
  for (const name of KUSTOMIZATION_FILE_NAMES) {
    const file = await commit.view.resolve([...segments, name]);
    if (file?.kind === 'blob') return name;
  }
  return undefined;
}

/** The commit's whole tree written under `root` for kustomize, each file counted against the limits. */
async function writeTree(
  commit: CachedCommit,
  root: string,
  { label, limits, signal }: { label: string; limits: ManifestLimits; signal: AbortSignal },
): Promise<void> {
  try {
    await materializeCommitTree({ view: commit.view, tree: commit.tree, into: root, limits, signal });
  } catch (error) {
    if (!(error instanceof MaterializeLimitError)) throw error;
    throw new KustomizeError(
      'refused',
      `${label}: ${error.message}; kustomize may read any file of the repository, so each counts`,
      { cause: error },
    );
  }
}
