import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ResolvedHelmSpec } from '../api/applyset-types.js';
import { locateExecutable, runBuildTool } from '../builds/run-sandboxed-tool.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import { formatBytes } from '../manifests/manifest-limits.js';
import { HelmError } from './helm-error.js';
import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';

export interface HelmRun {
  /** The chart's directory (holding Chart.yaml), in the render's private copy or a checkout. */
  readonly chartDir: string;
  readonly helm: Pick<ResolvedHelmSpec, 'releaseName' | 'namespace' | 'includeCRDs' | 'skipTests'>;
  /** The values files, absolute, in the order helm takes them (the later win). */
  readonly valuesFiles: readonly string[];
  /** `--set` values, after the files (the CLI's; a controller's render has none). */
  readonly set?: readonly string[];
  /** How messages name the render: `helm template apps/web`. */
  readonly label: string;
  /** The target cluster's version and API versions; undefined: helm's built-in defaults. */
  readonly capabilities?: ClusterCapabilities;
  /** Directories of the caller's to hide from helm's messages (the private copies), longest first. */
  readonly hide: readonly string[];
  /** An empty private directory: helm's home, config, cache, data and (empty) plugin directories. */
  readonly home: string;
  /** The most output taken; a render writing more is stopped. */
  readonly maxOutputBytes: number;
  /** The time and memory limits and the binary: those of the kustomize builds. */
  readonly options: Pick<KustomizeOptions, 'helmBinary' | 'timeoutMs' | 'maxMemoryBytes'>;
  readonly signal?: AbortSignal;
}

/** The most of helm's error output a message quotes. */
const MAX_ERROR_CHARS = 2000;
/** Where the binary may be named: the words of the message that says it could not be found. */
const BINARY_SETTINGS = '--helm-binary or APPLYSET_HELM_BINARY';

/**
 * Runs `helm template` (helmTemplateArgs) and returns what it printed, exactly. Client-only, as `helm
 * template` is without --validate: no cluster is asked anything (`lookup` returns nothing; the
 * Capabilities are the target cluster's when the caller gives them, else helm's built-in defaults).
 * Never with --dependency-update, a post-renderer, a repository or a plugin: HELM_NO_PLUGINS, an empty
 * HELM_PLUGINS, every helm directory private to this render, and the sandbox of runSandboxedTool (no
 * network, no PATH, killed at its time, memory or output limit). Errors are HelmError: `failed`
 * quoting helm's message, `internal` when it cannot be started.
 */
export async function runHelmTemplate(run: HelmRun): Promise<string> {
  const binary = await locateHelm(run.options.helmBinary);
  const { home } = run;
  const env = {
    HELM_NO_PLUGINS: '1',
    HELM_PLUGINS: path.join(home, 'plugins'),
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_DATA_HOME: path.join(home, 'data'),
    HELM_REPOSITORY_CONFIG: path.join(home, 'config', 'repositories.yaml'),
    HELM_REPOSITORY_CACHE: path.join(home, 'cache', 'repository'),
    HELM_REGISTRY_CONFIG: path.join(home, 'config', 'registry.json'),
    KUBECONFIG: path.join(home, 'no-kubeconfig'),
  };
  await mkdir(env.HELM_PLUGINS, { recursive: true, mode: 0o700 });
  const args = helmTemplateArgs(run);
  return runBuildTool(
    {
      binary,
      args,
      cwd: run.chartDir,
      home,
      env,
      timeoutMs: run.options.timeoutMs,
      maxMemoryBytes: run.options.maxMemoryBytes,
      maxOutputBytes: run.maxOutputBytes,
      ...(run.signal === undefined ? {} : { signal: run.signal }),
    },
    run.label,
    {
      make: (failure, message, options) => new HelmError(failure, message, options),
      isOwn: (error): error is HelmError => error instanceof HelmError,
      stopped: (why) => limitDetail(run, why),
      quote: (stderr) => cleanError(stderr, run.hide),
    },
  );
}

/**
 * `helm template RELEASE CHART --namespace NS [--include-crds] [--skip-tests] [--kube-version V
 * --api-versions A,...] --values FILE...`: the target cluster's capabilities as helm install reads them
 * from discovery (helm adds the API versions to its built-in ones, as it does for the flag).
 * @internal Tests check the arguments.
 */
export function helmTemplateArgs(
  run: Pick<HelmRun, 'helm' | 'chartDir' | 'valuesFiles' | 'capabilities' | 'set'>,
): string[] {
  const { helm, capabilities } = run;
  return [
    'template',
    helm.releaseName,
    run.chartDir,
    '--namespace',
    helm.namespace,
    ...(helm.includeCRDs ? ['--include-crds'] : []),
    ...(helm.skipTests ? ['--skip-tests'] : []),
    ...(capabilities === undefined
      ? []
      : [
          '--kube-version',
          capabilities.kubeVersion,
          ...(capabilities.apiVersions.length === 0
            ? []
            : ['--api-versions', capabilities.apiVersions.join(',')]),
        ]),
    ...run.valuesFiles.flatMap((file) => ['--values', file]),
    ...(run.set ?? []).flatMap((value) => ['--set', value]),
  ];
}

function limitDetail(run: HelmRun, why: 'time' | 'memory' | 'output'): string {
  const { timeoutMs, maxMemoryBytes } = run.options;
  return {
    time: `it ran past its time limit of ${timeoutMs / 1000} s (--kustomize-timeout, which bounds every build)`,
    memory: `it used more than its memory limit of ${formatBytes(maxMemoryBytes)} (--kustomize-max-memory, which bounds every build)`,
    output: `it printed more than ${formatBytes(run.maxOutputBytes)}, the limit of a set's manifests`,
  }[why];
}

/** helm's message, without its `Error: ` prefix nor the private directories it ran in. */
function cleanError(stderr: string, hide: readonly string[]): string {
  let text = stderr.trim().replace(/^Error: /, '');
  for (const dir of hide) text = text.split(`${dir}/`).join('').split(dir).join('.');
  text = text.split('\n').join('; ');
  if (text === '') return 'it exited without a message';
  if (text.length <= MAX_ERROR_CHARS) return text;
  // A template error chains every include it went through; its cause is at the end, so both ends are kept.
  const half = Math.floor(MAX_ERROR_CHARS / 2);
  return `${text.slice(0, half)} … ${text.slice(-half)}`;
}

/** The binary named, else `helm` on the controller's PATH. */
async function locateHelm(binary: string | undefined): Promise<string> {
  const found = await locateExecutable(binary ?? 'helm');
  if (found !== undefined) return found;
  const named = binary === undefined ? '"helm" is not on PATH' : `no executable ${JSON.stringify(binary)}`;
  throw new HelmError(
    'internal',
    `helm is not installed: ${named}; install it, or name the binary with ${BINARY_SETTINGS}`,
  );
}
