/**
 * Finds and merges the kubeconfig as kubectl does, with no client library: the files are parsed by
 * parseKubeConfigText and merged here; a pod with no kubeconfig uses its service account
 * (inClusterKubeConfig).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  IN_CLUSTER,
  inClusterAvailable,
  inClusterKubeConfig,
  SERVICE_ACCOUNT_ROOT,
} from './in-cluster-config.js';
import { currentClusterOf, currentContextOf, type KubeConfig } from './kubeconfig-model.js';
import { parseKubeConfigText } from './kubeconfig-parse.js';

import { KubeConfigError } from './kubeconfig-error.js';
import { messageOf } from '../errors/message-of.js';

export type { KubeConfig } from './kubeconfig-model.js';
export { KubeConfigError } from './kubeconfig-error.js';

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  /** Every file read, in order: for messages such as "cannot reach … (kubeconfig a:b)". */
  readonly paths: readonly string[];
  /** The files read joined as `KUBECONFIG` joins them (for the in-cluster config, its description). */
  readonly path: string;
  /** The context in use (`--context`, else the merged `current-context`). */
  readonly context: string;
}

export interface LoadKubeConfigOptions {
  /**
   * When the pod's in-cluster config is used with neither `--kubeconfig` nor `KUBECONFIG`:
   * `fallback` (kubectl) when `~/.kube/config` does not exist, `first` (controller-runtime's
   * GetConfig) before `~/.kube/config`, `never`. Default `fallback`.
   */
  readonly inCluster?: 'fallback' | 'first' | 'never';
  /** The service account directory; default /var/run/secrets/kubernetes.io/serviceaccount. */
  readonly serviceAccountRoot?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Loads the kubeconfig the way kubectl finds it: `--kubeconfig` alone when given, else every file of
 * `KUBECONFIG` merged as client-go merges them (a missing file is skipped; for clusters, users and
 * contexts the first file to name one wins; the first `current-context` set wins), else the pod's
 * in-cluster config or `~/.kube/config` (see LoadKubeConfigOptions.inCluster). `context` overrides
 * the current context, as `--context` does. Relative paths in a file (certificate-authority,
 * client-key…) are relative to that file. The environment is passed in (read once by the
 * composition root), not read from `process.env`.
 */
export function loadKubeConfig(
  env: Env,
  path?: string,
  context?: string,
  options: LoadKubeConfigOptions = {},
): LoadedKubeConfig {
  const listed = env['KUBECONFIG']?.split(delimiter).filter((entry) => entry !== '') ?? [];
  if (path === undefined && listed.length === 0) {
    const inCluster = loadInCluster(env, context, options);
    if (inCluster !== undefined) return inCluster;
  }
  const candidates =
    path !== undefined
      ? [path]
      : listed.length > 0
        ? [...new Set(listed)]
        : [join(env['HOME'] ?? homedir(), '.kube', 'config')];
  const loaded: { file: string; config: KubeConfig }[] = [];
  for (const file of candidates) {
    const config = readKubeConfigFile(file, { skipMissing: path === undefined && listed.length > 0 });
    if (config !== undefined) loaded.push({ file, config });
  }
  if (loaded.length === 0) {
    throw new KubeConfigError(
      `no kubeconfig found: KUBECONFIG lists ${candidates.join(delimiter)} and none of these files exists`,
    );
  }
  const paths = loaded.map(({ file }) => file);
  return {
    ...merge(
      loaded.map(({ config }) => config),
      paths.join(delimiter),
      context,
    ),
    paths,
  };
}

/** The in-cluster config when it applies (see LoadKubeConfigOptions.inCluster), else undefined. */
function loadInCluster(env: Env, context: string | undefined, options: LoadKubeConfigOptions) {
  const mode = options.inCluster ?? 'fallback';
  const root = options.serviceAccountRoot ?? SERVICE_ACCOUNT_ROOT;
  if (mode === 'never' || !inClusterAvailable(env, root)) return undefined;
  if (mode === 'fallback' && existsSync(join(env['HOME'] ?? homedir(), '.kube', 'config'))) return undefined;
  const described = `in-cluster config (${root})`;
  if (context !== undefined && context !== IN_CLUSTER) {
    throw new KubeConfigError(`context "${context}" does not exist in kubeconfig ${described}`);
  }
  return { kubeConfig: inClusterKubeConfig(env, root), paths: [], path: described, context: IN_CLUSTER };
}

/** The files' configs merged, first file wins per name; checked to name a cluster. */
function merge(
  configs: readonly KubeConfig[],
  described: string,
  context: string | undefined,
): Omit<LoadedKubeConfig, 'paths'> {
  const firstWins = <T extends { readonly name: string }>(pick: (config: KubeConfig) => readonly T[]) => {
    const byName = new Map<string, T>();
    for (const config of configs) {
      for (const entry of pick(config)) if (!byName.has(entry.name)) byName.set(entry.name, entry);
    }
    return [...byName.values()];
  };
  const contexts = firstWins((config) => config.contexts);
  const current = context ?? configs.map((config) => config.currentContext).find((name) => name !== '');
  if (context !== undefined && !contexts.some((entry) => entry.name === context)) {
    throw new KubeConfigError(`context "${context}" does not exist in kubeconfig ${described}`);
  }
  const kubeConfig: KubeConfig = {
    clusters: firstWins((config) => config.clusters),
    users: firstWins((config) => config.users),
    contexts,
    currentContext: current ?? '',
  };
  if (current === undefined || current === '') {
    throw new KubeConfigError(`kubeconfig ${described} sets no current context; pass --context`);
  }
  if (currentClusterOf(kubeConfig) === undefined) {
    throw new KubeConfigError(`kubeconfig ${described}: context "${current}" names no cluster it defines`);
  }
  return { kubeConfig, path: described, context: current };
}

function readKubeConfigFile(file: string, options: { skipMissing: boolean }): KubeConfig | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (options.skipMissing && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KubeConfigError(`cannot load kubeconfig ${file}: ${messageOf(error)}`, { cause: error });
  }
  try {
    return parseKubeConfigText(text, file);
  } catch (error) {
    throw new KubeConfigError(`cannot load kubeconfig ${file}: ${messageOf(error)}`, { cause: error });
  }
}

/** The namespace of the kubeconfig's current context, as kubectl defaults it; 'default' if none. */
export function contextNamespace(kubeConfig: KubeConfig): string {
  const namespace = currentContextOf(kubeConfig)?.namespace;
  return namespace !== undefined && namespace !== '' ? namespace : 'default';
}
