import { readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CachedCommit } from '../git/read-cached-manifests.js';
import {
  materializeCommitTree,
  MaterializeLimitError,
  type FileTransform,
} from '../git/materialize-commit-tree.js';
import { sourcePathSegments } from '../git/read-tree-manifests.js';
import { manifestLimits, type ManifestFile, type ManifestLimits } from '../manifests/manifest-limits.js';
import { copyCheckout } from './copy-checkout.js';
import { KustomizeError } from './kustomize-error.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, runKustomize, type KustomizeOptions } from './run-kustomize.js';
import {
  KUSTOMIZATION_FILE_NAMES,
  kustomizationFileIn,
  scanKustomization,
  type KustomizationScanner,
  type KustomizationTree,
} from './scan-kustomization.js';

export interface KustomizationRequest {
  /** `spec.source.path`. */
  readonly sourcePath: string | undefined;
  readonly options: KustomizeOptions;
  readonly limits?: Partial<ManifestLimits>;
  /** Applied to every file written for kustomize (see FileTransform). */
  readonly transform?: FileTransform;
  readonly signal?: AbortSignal;
}

/**
 * The kustomization file at the source path of a commit (`kustomization.yaml`, `kustomization.yml`
 * or `Kustomization`, links followed); undefined when the path is a file or a directory without one,
 * which is then read as plain manifests.
 */
export async function kustomizationAt(
  commit: CachedCommit,
  sourcePath: string | undefined,
): Promise<string | undefined> {
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
 * `kustomize build` of the source path of a commit, as one manifest file named `kustomize build
 * <path>` (so a decoding error names the build and the document). The commit's whole tree is written
 * to a new private directory (bases may be anywhere in the repository), checked (scanKustomization),
 * built, and removed whatever happens.
 */
export async function buildCommitKustomization(
  commit: CachedCommit,
  request: KustomizationRequest,
): Promise<ManifestFile> {
  const segments = sourcePathSegments(request.sourcePath);
  const relative = segments.join('/');
  const label = `kustomize build ${relative === '' ? '.' : relative}`;
  const limits = manifestLimits(request.limits);
  const work = await mkdtemp(path.join(tmpdir(), 'applyset-kustomize-'));
  try {
    const root = path.join(work, 'repo');
    try {
      await materializeCommitTree({
        view: commit.view,
        tree: commit.tree,
        into: root,
        limits,
        ...(request.transform === undefined ? {} : { transform: request.transform }),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    } catch (error) {
      if (!(error instanceof MaterializeLimitError)) throw error;
      throw new KustomizeError(
        'refused',
        `${label}: ${error.message}; kustomize may read any file of the repository, so each counts`,
        { cause: error },
      );
    }
    return await checkAndBuild({ root, relative, label, work, request, maxOutputBytes: limits.maxSetBytes });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * `kustomize build DIR` of a directory as it is on disk (`applyset apply -k DIR`): checked and run as
 * the controller runs it (kustomize from PATH, or APPLYSET_KUSTOMIZE_BINARY), the file system's root
 * standing for the repository's.
 */
export async function buildLocalKustomization(
  absolute: string,
  /** The directory as the user named it, for messages. */
  given: string,
  request: Partial<Pick<KustomizationRequest, 'options' | 'limits' | 'signal'>>,
): Promise<ManifestFile> {
  const work = await mkdtemp(path.join(tmpdir(), 'applyset-kustomize-'));
  try {
    return await checkAndBuild({
      root: path.parse(absolute).root,
      relative: path.relative(path.parse(absolute).root, absolute).split(path.sep).join('/'),
      label: `kustomize build ${given}`,
      work,
      request: { options: DEFAULT_KUSTOMIZE_OPTIONS, ...request },
      maxOutputBytes: manifestLimits(request.limits).maxSetBytes,
      scanner: 'cli',
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * `kustomize build` of `sourcePath` in a checkout on disk (a preview's `--local DIR`), as
 * buildCommitKustomization builds it from a commit: with a `transform` (sops decryption) the checkout
 * is first copied, each file transformed, to a new private directory removed whatever happens; without
 * one it is built in place, as `applyset apply -k` builds it.
 */
export async function buildCheckoutKustomization(
  checkout: string,
  request: KustomizationRequest,
): Promise<ManifestFile> {
  const relative = sourcePathSegments(request.sourcePath).join('/');
  const given = relative === '' ? '.' : relative;
  const { transform, ...rest } = request;
  if (transform === undefined) return buildLocalKustomization(path.join(checkout, relative), given, rest);
  const work = await mkdtemp(path.join(tmpdir(), 'applyset-kustomize-'));
  try {
    const root = path.join(work, 'repo');
    await mkdir(root, { mode: 0o700 });
    await copyCheckout(checkout, root, {
      transform,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    return await checkAndBuild({
      root,
      relative,
      label: `kustomize build ${given}`,
      work,
      request,
      maxOutputBytes: manifestLimits(request.limits).maxSetBytes,
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function checkAndBuild(build: {
  readonly root: string;
  readonly relative: string;
  readonly label: string;
  readonly work: string;
  readonly request: Pick<KustomizationRequest, 'options' | 'signal'>;
  readonly maxOutputBytes: number;
  /** Who builds, for the words of a refusal; the controller unless the CLI builds a directory. */
  readonly scanner?: KustomizationScanner;
}): Promise<ManifestFile> {
  const { root, relative, label, work, request } = build;
  const tree = fileSystemTree(root);
  if (kustomizationFileIn(tree, relative) === undefined) {
    throw new KustomizeError(
      'refused',
      `${label}: the directory holds no kustomization.yaml, kustomization.yml or Kustomization`,
    );
  }
  const problems = scanKustomization(tree, relative, build.scanner);
  if (problems.length > 0) {
    throw new KustomizeError('refused', `${label} was refused before it ran: ${problems.join('; ')}`);
  }
  const home = path.join(work, 'home');
  await mkdir(home, { mode: 0o700 });
  const text = await runKustomize({
    dir: path.join(root, relative),
    label,
    hide: root === path.parse(root).root ? undefined : root,
    home,
    maxOutputBytes: build.maxOutputBytes,
    options: request.options,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  });
  return { path: label, text };
}

/** The pre-scan's view of the files under `root` (synchronous: a handful of small kustomization files). */
function fileSystemTree(root: string): KustomizationTree {
  return {
    kindOf(relativePath) {
      try {
        const stat = statSync(path.join(root, relativePath));
        return stat.isDirectory() ? 'dir' : stat.isFile() ? 'file' : undefined;
      } catch {
        return undefined;
      }
    },
    read: (relativePath) => readFileSync(path.join(root, relativePath), 'utf8'),
  };
}
