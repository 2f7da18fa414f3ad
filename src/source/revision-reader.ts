/**
 * How the reconcile reads the tree of a revision, whatever source it came from (a Git commit, an OCI
 * artifact's layer, a preview's local checkout): what spec.source.path holds, a kustomization built or
 * the manifest files under it, and then spec.source.ignore and the names files go by.
 */
import type { ResolvedApplySetSpec, ResolvedHelmSpec } from '../api/applyset-types.js';
import { failureOutcome } from '../reconcile/failure-outcome.js';
import type { Step } from '../api/reconcile-outcome.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, type KustomizeOptions } from '../kustomize/run-kustomize.js';
import { excludeFiles } from '../manifests/exclude-files.js';
import type { FileTransform } from '../manifests/file-transform.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import type { Logger } from '../observability/create-logger.js';
import type { ChartInputs } from '../helm/chart-inputs.js';

/**
 * What a revision holds under a path: `kustomize build` of its kustomization, `helm template` of its
 * chart (spec.helm), or its manifest files.
 */
export type RevisionContent =
  | { readonly kind: 'kustomization'; readonly built: ManifestFile }
  | { readonly kind: 'chart'; readonly rendered: ManifestFile }
  | { readonly kind: 'manifests'; readonly files: ManifestFile[] };

/** How a build of a revision's kustomization, or a render of its chart, runs. */
interface RevisionBuild {
  readonly options: KustomizeOptions;
  /** spec.helm: the path is a chart, rendered so (src/helm/), whatever else it holds. */
  readonly helm?: ResolvedHelmSpec;
  /** With spec.helm: its values from ConfigMaps and Secrets, and the target cluster's capabilities. */
  readonly chart?: ChartInputs;
  readonly signal: AbortSignal;
  /** Each file the build reads (a chart's values files) passes through it first (sops decryption, or its refusal). */
  readonly transform?: FileTransform;
  /** The transform writes secrets: the build's files go to memory-backed scratch. */
  readonly inMemory?: boolean;
}

/** The tree of one revision, as a source adapter hands it over (src/source/source-adapter.ts). */
export interface RevisionReader {
  /**
   * What `path` holds, in one pass: with `build.helm`, `helm template` of the chart there; else
   * `kustomize build` of it when it holds a kustomization, else the manifest files under it (a
   * directory, read recursively, or one file).
   */
  read(path: string, build: RevisionBuild): Promise<RevisionContent>;
}

/**
 * The manifests of a revision under spec.source.path, less what spec.source.ignore leaves out; or, when
 * the path holds a kustomization, what `kustomize build` makes of it (docs/kustomize.md), as one file
 * named `kustomize build <path>` (ignore does not apply: kustomize reads what the kustomization lists);
 * or, with spec.helm, the chart there rendered, as one file named `helm template <path>` (docs/helm.md).
 */
export async function readFiles(
  reader: RevisionReader,
  spec: ResolvedApplySetSpec,
  read: {
    revision: string;
    signal: AbortSignal;
    log: Pick<Logger, 'error'>;
    kustomize?: KustomizeOptions;
    transform?: FileTransform;
    inMemory?: boolean;
    chart?: ChartInputs;
  },
): Promise<Step<ManifestFile[]>> {
  const { revision, signal, log, kustomize = DEFAULT_KUSTOMIZE_OPTIONS } = read;
  let content: RevisionContent;
  try {
    const build = {
      options: kustomize,
      signal,
      ...(spec.helm === undefined ? {} : { helm: spec.helm }),
      ...(read.chart === undefined ? {} : { chart: read.chart }),
      ...(read.transform === undefined ? {} : { transform: read.transform }),
      ...(read.inMemory === true ? { inMemory: true } : {}),
    };
    content = await reader.read(spec.source.path, build);
  } catch (error) {
    return { done: failureOutcome(error, { step: 'load', spec, revision }, log) };
  }
  if (content.kind === 'kustomization') return { value: [content.built] };
  if (content.kind === 'chart') return { value: [content.rendered] };
  // From here on a file is named from the repository root (`apps/prod/bad.yaml`, not `bad.yaml`), as
  // the user finds it in the repository: in every message, Event and status that names it.
  const fromRoot = (file: ManifestFile): ManifestFile =>
    spec.source.path === '' ? file : { ...file, path: `${spec.source.path}/${file.path}` };
  // spec.source.ignore: gitignore patterns from the repository root; a left-out file is never read as
  // a manifest, so it can neither break the set nor add to it.
  return { value: excludeFiles(content.files.map(fromRoot), spec.source.ignore, (file) => file.path).kept };
}
