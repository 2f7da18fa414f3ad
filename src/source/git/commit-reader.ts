/**
 * A commit of the shared Git cache as a revision's tree (src/source/revision-reader.ts). This is where
 * Git meets kustomize and helm: they read a directory and know nothing of commits.
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
import type { ManifestFile, ManifestLimits } from '../../manifests/manifest-limits.js';
import type { ResolvedHelmSpec } from '../../api/applyset-types.js';
import { HelmError } from '../../helm/helm-error.js';
import { helmLabel, renderMaterializedChart } from '../../helm/render-chart.js';
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
      const { helm } = build;
      if (helm !== undefined) {
        const rendered = await renderCommitChart(gitSource, { url, commit }, path, { ...build, helm });
        return { kind: 'chart', rendered };
      }
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
              (opened) =>
                writeTree(
                  opened,
                  root,
                  { label, limits: manifestLimits, signal: limits.signal },
                  kustomizeRefusal,
                ),
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

/**
 * spec.helm: the commit's tree written to a private directory once the build scheduler lets the render
 * start, under a read lock of its own released before helm runs, and the chart at `path` rendered
 * (src/helm/render-chart.ts). The whole tree, since values files may be anywhere in it.
 */
function renderCommitChart(
  gitSource: Pick<GitSource, 'readCommitTree'>,
  at: { url: string; commit: string },
  path: string,
  build: Parameters<RevisionReader['read']>[1] & { readonly helm: ResolvedHelmSpec },
): Promise<ManifestFile> {
  const label = helmLabel(path);
  return scheduledBuild(build, label, (limits) =>
    renderMaterializedChart(
      (root, manifestLimits) =>
        gitSource.readCommitTree(
          at,
          (opened) =>
            writeTree(opened, root, { label, limits: manifestLimits, signal: limits.signal }, helmRefusal),
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
}

/** A tree over the limits, for kustomize: it may read any file of the repository, so each counts. */
const kustomizeRefusal = (message: string, cause: unknown): Error =>
  new KustomizeError('refused', `${message}; kustomize may read any file of the repository, so each counts`, {
    cause,
  });

/** A tree over the limits, for helm: values files may be anywhere in it, so each counts. */
const helmRefusal = (message: string, cause: unknown): Error =>
  new HelmError('refused', `${message}; the whole tree is written for helm, so each file counts`, { cause });

/** The commit's whole tree written under `root` for a build, each file counted against the limits. */
async function writeTree(
  commit: CachedCommit,
  root: string,
  { label, limits, signal }: { label: string; limits: ManifestLimits; signal: AbortSignal },
  refusal: (message: string, cause: unknown) => Error,
): Promise<void> {
  try {
    await materializeCommitTree({ view: commit.view, tree: commit.tree, into: root, limits, signal });
  } catch (error) {
    if (!(error instanceof MaterializeLimitError)) throw error;
    throw refusal(`${label}: ${error.message}`, error);
  }
}
