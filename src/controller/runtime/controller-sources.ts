/**
 * The source types the controller reads, each made from its flags: the one place a source type's
 * settings meet the controller's configuration.
 */
import path from 'node:path';
import { createGitSource } from '../../git/git-source.js';
import { createOciSource } from '../../source/oci/oci-source.js';
import type { SourceAdapters } from '../../source/source-adapter.js';
import { sourceAdapters } from '../../source/source-adapters.js';
import type { ControllerConfig } from './controller-config.js';

export function controllerSources(config: ControllerConfig): SourceAdapters {
  return sourceAdapters({
    gitSource: createGitSource({
      cacheDir: config.gitCacheDir,
      allowedHosts: config.allowedSourceHosts ?? [],
      requireCredentialHosts: config.requireSecretSourceHosts === true,
      ...(config.gitFetchLimits === undefined ? {} : { fetchLimits: config.gitFetchLimits }),
      ...(config.gitCacheMaxBytes === undefined ? {} : { cacheMaxBytes: config.gitCacheMaxBytes }),
      ...(config.gitCacheMaxRepositoryBytes === undefined
        ? {}
        : { cacheMaxRepositoryBytes: config.gitCacheMaxRepositoryBytes }),
    }),
    // Artifacts beside the repositories, in a directory the Git cache's budget skips (a dot name).
    ociSource: createOciSource({
      cacheDir: path.join(config.gitCacheDir, '.oci-artifacts'),
      allowedHosts: config.allowedSourceHosts ?? [],
      ...(config.ociArtifactLimits === undefined ? {} : { limits: config.ociArtifactLimits }),
      ...(config.ociCacheMaxBytes === undefined ? {} : { maxCacheBytes: config.ociCacheMaxBytes }),
    }),
  });
}
