import { dirname, join } from 'node:path';
import { createSources } from '../source/source-adapters.js';
import { parseSourceHostList } from '../net/host-list.js';
import { createOpenApiDiskCache, openApiCacheDir } from '../kube/openapi-disk-cache.js';
import type { PreviewAccess } from '../preview/preview-applyset.js';
import type { ApplySetAccess } from './applyset-access.js';
import type { CliIo } from './cli-io.js';
import { proxiesOf } from './cli-proxies.js';
import { single, type ParsedFlags } from './parse-command-line.js';

/**
 * The preview's way to the cluster and the repository: the command's access to the cluster (its
 * client, and the same connection impersonating the ApplySet's account), with the OpenAPI documents
 * and Git fetches cached on disk between runs.
 */
export function previewAccessOf(
  { client, clientAs }: Pick<ApplySetAccess, 'client' | 'clientAs'>,
  flags: ParsedFlags,
  io: CliIo,
): PreviewAccess {
  const openApiDir = openApiCacheDir(io.env);
  return {
    client,
    clientAs,
    // Git servers and registries are sources alike: one cache root and --allowed-source-hosts.
    sources: createSources({
      cacheDir: join(dirname(openApiDir), 'git'),
      allowedHosts: parseSourceHostList(single(flags, 'allowed-source-hosts') ?? ''),
      // The user's HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as the controller's.
      proxies: proxiesOf(io.env),
    }),
    openApiStore: createOpenApiDiskCache(openApiDir),
  };
}
