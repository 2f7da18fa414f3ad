import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';

/** The kubeconfig could not be read or names no cluster. Stalled: the user must fix the flag or file. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  readonly code = 'KUBECONFIG_INVALID';
  readonly intent = 'stalled';
}

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  /** Every file read, in order: for messages such as "cannot reach … (kubeconfig a:b)". */
  readonly paths: readonly string[];
  /** The files read joined as `KUBECONFIG` joins them. */
  readonly path: string;
  /** The context in use (`--context`, else the merged `current-context`). */
  readonly context: string;
}

/**
 * Loads the kubeconfig the way kubectl finds it: `--kubeconfig` alone when given, else every file of
 * `KUBECONFIG` merged as client-go merges them (a missing file is skipped; for clusters, users and
 * contexts the first file to name one wins; the first `current-context` set wins), else
 * `~/.kube/config`. `context` overrides the current context, as `--context` does. Relative paths in a
 * file (certificate-authority, client-key…) are relative to that file. The environment is passed in
 * (read once by the composition root), not read from `process.env` as `loadFromDefault` would.
 */
export function loadKubeConfig(
  env: Readonly<Record<string, string | undefined>>,
  path?: string,
  context?: string,
): LoadedKubeConfig {
  const listed = env['KUBECONFIG']?.split(delimiter).filter((entry) => entry !== '') ?? [];
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
  const described = paths.join(delimiter);
  const firstWins = <T extends { readonly name: string }>(pick: (config: KubeConfig) => readonly T[]) => {
    const byName = new Map<string, T>();
    for (const { config } of loaded) {
      for (const entry of pick(config)) if (!byName.has(entry.name)) byName.set(entry.name, entry);
    }
    return [...byName.values()];
  };
  const contexts = firstWins<Context>((config) => config.contexts ?? []);
  const current =
    context ?? loaded.map(({ config }) => config.currentContext).find((name) => (name ?? '') !== '');
  if (context !== undefined && !contexts.some((entry) => entry.name === context)) {
    throw new KubeConfigError(`context "${context}" does not exist in kubeconfig ${described}`);
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: firstWins<Cluster>((config) => config.clusters ?? []),
    users: firstWins<User>((config) => config.users ?? []),
    contexts,
    currentContext: current ?? '',
  });
  if (current === undefined || current === '') {
    throw new KubeConfigError(`kubeconfig ${described} sets no current context; pass --context`);
  }
  if (kubeConfig.getCurrentCluster() === null) {
    throw new KubeConfigError(`kubeconfig ${described}: context "${current}" names no cluster it defines`);
  }
  return { kubeConfig, paths, path: described, context: current };
}

function readKubeConfigFile(file: string, options: { skipMissing: boolean }): KubeConfig | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (options.skipMissing && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KubeConfigError(`cannot load kubeconfig ${file}: ${messageOf(error)}`, { cause: error });
  }
  const config = new KubeConfig();
  // An empty file is an empty config to client-go; client-node's loader would fail on it.
  if (text.trim() === '') return config;
  try {
    config.loadFromString(text);
    config.makePathsAbsolute(dirname(file));
  } catch (error) {
    throw new KubeConfigError(`cannot load kubeconfig ${file}: ${messageOf(error)}`, { cause: error });
  }
  return config;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The namespace of the kubeconfig's current context, as kubectl defaults it; 'default' if none. */
export function contextNamespace(kubeConfig: KubeConfig): string {
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace !== undefined && context.namespace !== '' ? context.namespace : 'default';
}
