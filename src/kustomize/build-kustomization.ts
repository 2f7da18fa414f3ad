import { readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildLimits } from '../builds/build-scheduler.js';
import type { FileTransform } from '../manifests/file-transform.js';
import { commonAncestor, sourcePathSegments } from '../manifests/source-path.js';
import { manifestLimits, type ManifestFile, type ManifestLimits } from '../manifests/manifest-limits.js';
import { copyCheckout } from './copy-checkout.js';
import { KustomizeError } from './kustomize-error.js';
import { DEFAULT_DECRYPTION_SCRATCH_DIR, memoryScratchDir } from './memory-scratch.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, runKustomize, type KustomizeOptions } from './run-kustomize.js';
import {
  kustomizationFileIn,
  kustomizationInputs,
  type KustomizationScanner,
  type KustomizationTree,
} from './scan-kustomization.js';

export interface KustomizationRequest {
  /** `spec.source.path`. */
  readonly sourcePath: string | undefined;
  readonly options: KustomizeOptions;
  readonly limits?: Partial<ManifestLimits>;
  /**
   * Called, once the pre-scan passed and before kustomize runs, on each file the build reads (what
   * kustomizationInputs lists: never a file no reachable kustomization names): the bytes it returns
   * replace the file's (sops decryption), or it throws to refuse the build (a sops file, no key).
   */
  readonly transform?: FileTransform;
  /**
   * The transform writes secrets: the build's files are then written to a memory-backed directory
   * (options.decryptionScratchDir, memory-scratch.ts), never to the temp directory on disk.
   */
  readonly inMemory?: boolean;
  readonly signal?: AbortSignal;
}

/** How messages name the build of a source path: `kustomize build apps/prod`, `kustomize build .`. */
export function kustomizeLabel(sourcePath: string | undefined): string {
  const relative = sourcePathSegments(sourcePath).join('/');
  return `kustomize build ${relative === '' ? '.' : relative}`;
}

/**
 * Runs `build` as `request.options.schedule` lets it (the controller's build scheduler), or at once
 * under `--kustomize-timeout` when there is none (the command line).
 */
export function scheduledBuild<T>(
  request: Pick<KustomizationRequest, 'options' | 'signal'>,
  label: string,
  build: (limits: BuildLimits) => Promise<T>,
): Promise<T> {
  const { schedule, timeoutMs } = request.options;
  if (schedule !== undefined) return schedule(label, build);
  return build({ signal: request.signal ?? new AbortController().signal, timeoutMs });
}

/**
 * `kustomize build` of the source path of a tree that `materialize` writes into a new private
 * directory (a source's whole tree: bases may be anywhere in it), as one manifest file named
 * `kustomize build <path>` (so a decoding error names the build and the document). The tree is then
 * checked (scanKustomization), built, and removed whatever happens. The source writes its tree and
 * lets go of it (a Git commit's read lock) before kustomize runs, so a fetch of the same source,
 * maybe another tenant's, never waits for a build. Kustomize knows nothing of where the tree came from.
 */
export async function buildMaterializedKustomization(
  materialize: (root: string, limits: ManifestLimits) => Promise<void>,
  request: KustomizationRequest,
): Promise<ManifestFile> {
  const relative = sourcePathSegments(request.sourcePath).join('/');
  const label = kustomizeLabel(request.sourcePath);
  const limits = manifestLimits(request.limits);
  const work = await privateWorkDir(request);
  try {
    const root = path.join(work, 'repo');
    await materialize(root, limits);
    return await checkAndBuild({
      root,
      relative,
      label,
      work,
      request,
      maxOutputBytes: limits.maxSetBytes,
      writable: true,
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * `kustomize build DIR` of a directory as it is on disk (`applyset apply -k DIR`): checked and run as
 * the controller runs it (kustomize from PATH, or APPLYSET_KUSTOMIZE_BINARY), the file system's root
 * standing for the repository's. Built in place; with an `inMemory` transform (the CLI's sops
 * decryption), the smallest directory holding every kustomization and file the build reads is first
 * copied to memory-backed scratch, and built there.
 */
export async function buildLocalKustomization(
  absolute: string,
  /** The directory as the user named it, for messages. */
  given: string,
  request: Partial<Pick<KustomizationRequest, 'options' | 'limits' | 'signal' | 'transform' | 'inMemory'>>,
): Promise<ManifestFile> {
  const options = request.options ?? DEFAULT_KUSTOMIZE_OPTIONS;
  const fsRoot = path.parse(absolute).root;
  const relative = path.relative(fsRoot, absolute).split(path.sep).join('/');
  const label = `kustomize build ${given}`;
  if (request.transform !== undefined && request.inMemory === true) {
    const top = commonDirectory(relative, kustomizationInputs(fileSystemTree(fsRoot), relative));
    return buildCheckoutKustomization(path.join(fsRoot, top), {
      ...request,
      options,
      transform: request.transform,
      sourcePath: path.posix.relative(top, relative),
      label,
    });
  }
  const work = await mkdtemp(path.join(tmpdir(), 'applyset-kustomize-'));
  try {
    return await checkAndBuild({
      root: fsRoot,
      relative,
      label,
      work,
      request: { ...request, options },
      maxOutputBytes: manifestLimits(request.limits).maxSetBytes,
      writable: false,
      scanner: 'cli',
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * `kustomize build` of `sourcePath` in a checkout on disk (a preview's `--local DIR`, an extracted OCI
 * artifact), as buildMaterializedKustomization builds a source's tree, the checkout its root: with an
 * `inMemory` transform (sops decryption) the checkout is first copied to a new private directory in
 * memory-backed scratch, removed whatever happens, and the files the build reads are decrypted there;
 * otherwise it is built in place (a transform may then refuse a file, never change it).
 */
export async function buildCheckoutKustomization(
  checkout: string,
  request: KustomizationRequest & { readonly label?: string },
): Promise<ManifestFile> {
  const relative = sourcePathSegments(request.sourcePath).join('/');
  const given = relative === '' ? '.' : relative;
  const { label = `kustomize build ${given}` } = request;
  const work = await privateWorkDir(request);
  const maxOutputBytes = manifestLimits(request.limits).maxSetBytes;
  if (request.transform === undefined || request.inMemory !== true) {
    // Built in place, the checkout being the root a kustomization may not leave, as a commit's tree
    // is: an artifact's `resources: ../<another layer>` is refused, not built.
    try {
      return await checkAndBuild({
        root: checkout,
        relative,
        label,
        work,
        request,
        maxOutputBytes,
        writable: false,
      });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  try {
    const root = path.join(work, 'repo');
    await mkdir(root, { mode: 0o700 });
    await copyCheckout(checkout, root, request.signal === undefined ? {} : { signal: request.signal });
    return await checkAndBuild({
      root,
      relative,
      label,
      work,
      request,
      maxOutputBytes,
      writable: true,
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A new private directory for one build: in memory-backed scratch when it will hold secrets. */
async function privateWorkDir(request: Pick<KustomizationRequest, 'options' | 'inMemory'>): Promise<string> {
  if (request.inMemory === true) {
    return memoryScratchDir(request.options.decryptionScratchDir ?? DEFAULT_DECRYPTION_SCRATCH_DIR);
  }
  return mkdtemp(path.join(tmpdir(), 'applyset-kustomize-'));
}

/** The deepest directory (from the root, '' the root) holding `dir` and every path a build reads. */
function commonDirectory(
  dir: string,
  inputs: { readonly files: readonly string[]; readonly directories: readonly string[] },
): string {
  return commonAncestor([
    dir,
    ...inputs.directories,
    ...inputs.files.map((file) => path.posix.dirname(file)),
  ]);
}

async function checkAndBuild(build: {
  readonly root: string;
  readonly relative: string;
  readonly label: string;
  readonly work: string;
  readonly request: Pick<KustomizationRequest, 'options' | 'signal' | 'transform'>;
  readonly maxOutputBytes: number;
  /** The files are the build's own copy, which the transform may rewrite (else it may only refuse). */
  readonly writable: boolean;
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
  const { problems, files } = kustomizationInputs(tree, relative, build.scanner);
  if (problems.length > 0) {
    throw new KustomizeError('refused', `${label} was refused before it ran: ${problems.join('; ')}`);
  }
  if (request.transform !== undefined) {
    await transformInputs(root, files, request.transform, build.writable, request.signal);
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

/**
 * Each file the build reads passed through `transform`, in place: only those, so a sops file of the
 * repository that no reachable kustomization names (another environment's, encrypted to another key)
 * is never opened.
 */
async function transformInputs(
  root: string,
  files: readonly string[],
  transform: FileTransform,
  writable: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  const realRoot = await realpath(root);
  for (const file of files) {
    signal?.throwIfAborted();
    // Through links, to the file itself; one outside the build's directory is kustomize's to refuse
    // (its root-only restrictor), and is neither opened nor written here.
    const at = await realpath(path.join(root, file));
    if (path.relative(realRoot, at).startsWith('..')) continue;
    const bytes = await readFile(at);
    // Built in place (`apply -k`), a file is named by its absolute path, as the user knows it.
    const changed = await transform(root === path.parse(root).root ? path.join(root, file) : file, bytes);
    if (changed === bytes) continue;
    // A checkout built in place is the user's: it is never written to.
    if (!writable) throw new Error(`${file} would be rewritten for kustomize in the user's own directory`);
    // Owner-only (its directory already is): the file now holds what sops kept secret.
    await chmod(at, 0o600);
    await writeFile(at, changed);
  }
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
