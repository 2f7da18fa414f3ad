import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** The kubeconfig could not be read or names no cluster. Stalled: the user must fix the flag or file. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  readonly code = 'KUBECONFIG_INVALID';
  readonly intent = 'stalled';
}

/**
 * Loads the kubeconfig the way kubectl finds it: `--kubeconfig`, else the first file of `KUBECONFIG`,
 * else `~/.kube/config`. The environment is passed in (read once by the composition root), not read
 * from `process.env` as `loadFromDefault` would.
 */
export function loadKubeConfig(
  env: Readonly<Record<string, string | undefined>>,
  path?: string,
): { kubeConfig: KubeConfig; path: string } {
  const fromEnv = env['KUBECONFIG']?.split(delimiter).find((entry) => entry !== '');
  const chosen = path ?? fromEnv ?? join(env['HOME'] ?? homedir(), '.kube', 'config');
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(chosen);
  } catch (error) {
    throw new KubeConfigError(
      `cannot load kubeconfig ${chosen}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  if (kubeConfig.getCurrentCluster() === null) {
    throw new KubeConfigError(`kubeconfig ${chosen} has no current context with a cluster`);
  }
  return { kubeConfig, path: chosen };
}

/** The namespace of the kubeconfig's current context, as kubectl defaults it; 'default' if none. */
export function contextNamespace(kubeConfig: KubeConfig): string {
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace !== undefined && context.namespace !== '' ? context.namespace : 'default';
}
