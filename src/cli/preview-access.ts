import { dirname, join, resolve } from 'node:path';
import { createGitSource } from '../git/git-source.js';
import { parseSourceHostList } from '../git/source-host-list.js';
import { createKubeClient } from '../kube/kube-client.js';
import { createKubeConnection } from '../kube/kube-connection.js';
import { createKubeCredentials } from '../kube/kube-credentials.js';
import { KubeConfigError } from '../kube/kubeconfig-error.js';
import { contextNamespace, loadKubeConfig } from '../kube/load-kube-config.js';
import { createOpenApiDiskCache, openApiCacheDir } from '../kube/openapi-disk-cache.js';
import type { PreviewAccess } from '../preview/preview-applyset.js';
import type { CliIo } from './cli-io.js';
import { single, type ParsedFlags } from './parse-command-line.js';

/**
 * The preview's way to the cluster and the repository, from the kubeconfig as `apply` reads it: one
 * connection for the user's own requests and those impersonating the ApplySet's account, the OpenAPI
 * documents and Git fetches cached on disk between runs.
 */
export function openPreviewAccess(
  flags: ParsedFlags,
  io: CliIo,
): { readonly access: PreviewAccess; readonly namespace: string } | { readonly error: string } {
  try {
    const kubeconfig = single(flags, 'kubeconfig');
    const loaded = loadKubeConfig(
      io.env,
      kubeconfig === undefined ? undefined : resolve(io.cwd, kubeconfig),
      single(flags, 'context'),
    );
    const connection = createKubeConnection({ credentials: createKubeCredentials(loaded.kubeConfig) });
    const openApiDir = openApiCacheDir(io.env);
    return {
      namespace: single(flags, 'namespace') ?? contextNamespace(loaded.kubeConfig),
      access: {
        client: createKubeClient({ connection }),
        clientAs: (user) => createKubeClient({ connection, impersonateUser: user }),
        gitSource: createGitSource({
          cacheDir: join(dirname(openApiDir), 'git'),
          allowedHosts: parseSourceHostList(single(flags, 'allowed-source-hosts') ?? ''),
        }),
        openApiStore: createOpenApiDiskCache(openApiDir),
      },
    };
  } catch (error) {
    if (error instanceof KubeConfigError) return { error: error.message };
    throw error;
  }
}
