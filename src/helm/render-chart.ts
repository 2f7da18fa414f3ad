import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ResolvedHelmSpec } from '../api/applyset-types.js';
import { DEFAULT_DECRYPTION_SCRATCH_DIR, memoryScratchDir } from '../kustomize/memory-scratch.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { FileTransform } from '../manifests/file-transform.js';
import {
  formatBytes,
  manifestLimits,
  type ManifestFile,
  type ManifestLimits,
} from '../manifests/manifest-limits.js';
import { sourcePathSegments } from '../manifests/source-path.js';
import type { ChartInputs } from './chart-inputs.js';
import { HelmError } from './helm-error.js';
import { keepChartCrds } from './keep-chart-crds.js';
import { runHelmTemplate } from './run-helm.js';
import { valuesFileText } from './values-from-document.js';
import { messageOf } from '../errors/message-of.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';

/** One chart to render: where it is in the source, how (spec.helm), under which limits. */
export interface ChartRequest {
  /** `spec.source.path`: the chart's directory. */
  readonly sourcePath: string;
  readonly helm: ResolvedHelmSpec;
  /** The build options: helm's binary, the time and memory limits, the scratch directory. */
  readonly options: KustomizeOptions;
  readonly limits?: Partial<ManifestLimits>;
  /** Each values file passes through it (sops decryption, or its refusal) before helm reads it. */
  readonly transform?: FileTransform;
  /**
   * The transform writes secrets, or values come from a Secret: the render's private files go to
   * memory-backed scratch.
   */
  readonly inMemory?: boolean;
  /** spec.helm.valuesFrom's values, and the target cluster's capabilities. */
  readonly chart?: ChartInputs;
  readonly signal?: AbortSignal;
  /** How messages name the render; default `helm template <sourcePath>`. */
  readonly label?: string;
  /** `--set` values, given to helm last, as typed on `applyset apply --set` (the CLI only). */
  readonly set?: readonly string[];
}

/** How every render's label begins: the build scheduler's time limit names a render by it. */
export const HELM_LABEL_PREFIX = 'helm template ';

/** How messages name the render of a source path: `helm template apps/web`, `helm template .`. */
export function helmLabel(sourcePath: string): string {
  const relative = sourcePathSegments(sourcePath).join('/');
  return `${HELM_LABEL_PREFIX}${relative === '' ? '.' : relative}`;
}

/**
 * The chart of a source's tree that `materialize` writes into a new private directory (the whole
 * tree: values files may be anywhere in it), rendered as one manifest file named `helm template
 * <path>`, so a decoding error names the render. The directory is removed whatever happens; the
 * source lets go of its tree (a Git commit's read lock) before helm runs.
 */
export async function renderMaterializedChart(
  materialize: (root: string, limits: ManifestLimits) => Promise<void>,
  request: ChartRequest,
): Promise<ManifestFile> {
  const limits = manifestLimits(request.limits);
  const work = await privateWorkDir(request);
  try {
    const root = path.join(work, 'repo');
    await materialize(root, limits);
    return await renderIn(root, work, request, limits);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The chart of a tree on disk (an extracted OCI artifact, a preview's checkout), rendered in place:
 * helm only reads it. The values files are copied, through the transform, to a private directory.
 */
export async function renderCheckoutChart(checkout: string, request: ChartRequest): Promise<ManifestFile> {
  const limits = manifestLimits(request.limits);
  const work = await privateWorkDir(request);
  try {
    return await renderIn(checkout, work, request, limits);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function renderIn(
  root: string,
  work: string,
  request: ChartRequest,
  limits: ManifestLimits,
): Promise<ManifestFile> {
  const label = request.label ?? helmLabel(request.sourcePath);
  const relative = sourcePathSegments(request.sourcePath).join('/');
  const chartDir = path.join(root, relative);
  if ((await kindOf(path.join(chartDir, 'Chart.yaml'))) !== 'file') {
    throw new HelmError(
      'refused',
      `${label}: spec.helm is set, but ${relative === '' ? 'the source root' : relative} (spec.source.path) holds no Chart.yaml; point spec.source.path at the chart's directory`,
    );
  }
  const valuesDir = path.join(work, 'values');
  const valuesFiles = await stageValues({ root, valuesDir, label, request, limits });
  const capabilities = await capabilitiesOf(request, label);
  const home = path.join(work, 'home');
  await mkdir(home, { mode: 0o700 });
  const text = await runHelmTemplate({
    chartDir,
    helm: request.helm,
    valuesFiles,
    set: request.set ?? [],
    label,
    hide: [valuesDir, root],
    ...(capabilities === undefined ? {} : { capabilities }),
    home,
    maxOutputBytes: limits.maxSetBytes,
    options: request.options,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  });
  if (!request.helm.includeCRDs || request.helm.pruneCRDs) return { path: label, text };
  const decode = { maxDocumentBytes: limits.maxFileBytes, maxTotalBytes: limits.maxSetBytes };
  return { path: label, text: keepChartCrds(text, label, decode) };
}

/**
 * The values files helm is given, in helm's and Flux's order (the later win over the earlier, and all
 * over the chart's values.yaml): spec.helm.valuesFiles, then spec.helm.valuesFrom, then the inline
 * spec.helm.values. Each is written to the render's private directory.
 */
async function stageValues(stage: {
  readonly root: string;
  readonly valuesDir: string;
  readonly label: string;
  readonly request: ChartRequest;
  readonly limits: ManifestLimits;
}): Promise<string[]> {
  const { valuesDir, label, request } = stage;
  const valuesFiles: string[] = [];
  for (const file of request.helm.valuesFiles) valuesFiles.push(await stageValuesFile({ ...stage, file }));
  const write = async (name: string, text: string): Promise<string> => {
    const out = path.join(valuesDir, name);
    await mkdir(valuesDir, { recursive: true, mode: 0o700 });
    await writeFile(out, text, { mode: 0o600 });
    return out;
  };
  for (const document of request.chart?.valuesFrom ?? []) {
    const size = Buffer.byteLength(document.text, 'utf8');
    if (size > stage.limits.maxFileBytes) {
      throw new HelmError(
        'refused',
        `${label}: ${document.field} names ${document.from}, which is ${formatBytes(size)}, over the limit of ${formatBytes(stage.limits.maxFileBytes)} per file`,
      );
    }
    // Named after the entry, so helm's messages (a YAML error) say which one it was.
    valuesFiles.push(await write(document.field, valuesFileText(document)));
  }
  // JSON is YAML: helm reads it as it reads any values file, after the others, so these win.
  if (Object.keys(request.helm.values).length > 0)
    valuesFiles.push(await write('spec.helm.values', JSON.stringify(request.helm.values)));
  return valuesFiles;
}

/** The target cluster's capabilities, when the caller gives them; a failure to read them is retried. */
async function capabilitiesOf(
  request: ChartRequest,
  label: string,
): Promise<ClusterCapabilities | undefined> {
  const ask = request.chart?.capabilities;
  if (ask === undefined) return undefined;
  try {
    return await ask();
  } catch (error) {
    rethrowAbort(error);
    throw new HelmError(
      'capabilities',
      `${label}: the target cluster's version and API versions (helm's .Capabilities) could not be read: ${messageOf(error)}`,
      { cause: error },
    );
  }
}

/**
 * One values file of the source (its path from the root) read, passed through the transform (a sops
 * file decrypted, or refused without spec.decryption) and written to the render's private directory
 * under the same path, so helm's messages name it as the repository does. A file that resolves
 * outside the tree, is missing or is over the per-file limit refuses the render.
 */
async function stageValuesFile(stage: {
  readonly root: string;
  readonly file: string;
  readonly valuesDir: string;
  readonly label: string;
  readonly request: ChartRequest;
  readonly limits: ManifestLimits;
}): Promise<string> {
  const { root, file, label, request } = stage;
  const refuse = (why: string) =>
    new HelmError('refused', `${label}: spec.helm.valuesFiles names ${file}, which ${why}`);
  let at: string;
  try {
    at = await realpath(path.join(root, file));
  } catch {
    throw refuse('the source does not hold');
  }
  if (path.relative(await realpath(root), at).startsWith('..'))
    throw refuse("leads outside the source's tree");
  const info = await stat(at);
  if (!info.isFile()) throw refuse('is not a file');
  if (info.size > stage.limits.maxFileBytes) {
    throw refuse(
      `is ${formatBytes(info.size)}, over the limit of ${formatBytes(stage.limits.maxFileBytes)} per file`,
    );
  }
  request.signal?.throwIfAborted();
  const bytes = await readFile(at);
  const staged = request.transform === undefined ? bytes : await request.transform(file, bytes);
  const out = path.join(stage.valuesDir, file);
  await mkdir(path.dirname(out), { recursive: true, mode: 0o700 });
  await writeFile(out, staged, { mode: 0o600 });
  return out;
}

/** A new private directory for one render: in memory-backed scratch when it will hold secrets. */
async function privateWorkDir(request: Pick<ChartRequest, 'options' | 'inMemory'>): Promise<string> {
  if (request.inMemory === true) {
    return memoryScratchDir(request.options.decryptionScratchDir ?? DEFAULT_DECRYPTION_SCRATCH_DIR);
  }
  return mkdtemp(path.join(tmpdir(), 'applyset-helm-'));
}

async function kindOf(file: string): Promise<'file' | 'other' | undefined> {
  try {
    return (await stat(file)).isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}
