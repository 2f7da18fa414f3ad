/**
 * The source types the controller reads (src/source/source-adapters.ts), made from its flags.
 */
import type { SourceAdapters } from '../../source/source-adapter.js';
import { createSources } from '../../source/source-adapters.js';
import type { ControllerConfig } from './controller-config.js';

export function controllerSources(config: ControllerConfig): SourceAdapters {
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
  return createSources({
    cacheDir: config.gitCacheDir,
    allowedHosts: config.allowedSourceHosts ?? [],
    ...optional('proxies', config.proxies),
    git: {
      requireCredentialHosts: config.requireSecretSourceHosts === true,
      ...optional('fetchLimits', config.gitFetchLimits),
      ...optional('cacheMaxBytes', config.gitCacheMaxBytes),
      ...optional('cacheMaxRepositoryBytes', config.gitCacheMaxRepositoryBytes),
    },
    helm: { requireCredentialHosts: config.requireSecretSourceHosts === true },
    oci: {
      ...optional('limits', config.ociArtifactLimits),
      ...optional('maxCacheBytes', config.ociCacheMaxBytes),
    },
  });
}
