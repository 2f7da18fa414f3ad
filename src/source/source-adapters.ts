/**
 * The source types a controller (or a preview) reads, by spec.source.kind: the one place a source type
 * is registered and made from the settings (docs/architecture.md, "The source seam").
 */
import path from 'node:path';
import { createGitSource, type GitSource, type GitSourceOptions } from '../git/git-source.js';
import { gitAdapter } from './git/git-adapter.js';
import type { GitHubAppSettings } from './git/github-app-auth.js';
import { createInstallationTokens } from '../github-app/installation-tokens.js';
import { helmRepositoryAdapter } from './helm-repository/helm-repository-adapter.js';
import {
  createHelmRepositorySource,
  type HelmRepositorySource,
  type HelmRepositorySourceOptions,
} from './helm-repository/helm-repository-source.js';
import { ociAdapter } from './oci/oci-adapter.js';
import { createOciSource, type OciSource, type OciSourceOptions } from './oci/oci-source.js';
import type { SourceAdapters } from './source-adapter.js';
import type { SourceHostList } from '../net/host-list.js';
import type { ProxyEnvironment } from '../net/proxy-environment.js';

/** Where sources are cached, which hosts they may reach, and each type's own limits. */
export interface SourceSettings {
  /** The Git cache's directory; an OCI artifact is extracted beside the repositories, under `.oci-artifacts`. */
  readonly cacheDir: string;
  /** `--allowed-source-hosts`: Git servers and registries alike. */
  readonly allowedHosts: SourceHostList;
  /** The operator's proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), for every source type. */
  readonly proxies?: ProxyEnvironment;
  readonly git?: Omit<GitSourceOptions, 'cacheDir' | 'allowedHosts'>;
  readonly oci?: { readonly limits?: OciSourceOptions['limits']; readonly maxCacheBytes?: number };
  /** Helm repositories: a chart archive is bounded by the OCI artifact limits (`oci.limits`). */
  readonly helm?: Pick<HelmRepositorySourceOptions, 'requireCredentialHosts' | 'maxIndexBytes'>;
}

/** Every source type, made from the settings. */
export function createSources(settings: SourceSettings): SourceAdapters {
  const { cacheDir, allowedHosts, proxies } = settings;
  return sourceAdapters({
    gitSource: createGitSource({
      ...settings.git,
      cacheDir,
      allowedHosts,
      ...(proxies === undefined ? {} : { proxies }),
    }),
    // GitHub Apps' installation tokens, asked of an API host under the same host policy as Git's.
    githubApps: {
      tokens: createInstallationTokens(),
      allowedHosts,
      requireCredentialHosts: settings.git?.requireCredentialHosts === true,
      proxies,
    },
    // A directory the Git cache's budget skips (a dot name).
    ociSource: createOciSource({
      ...settings.oci,
      cacheDir: path.join(cacheDir, '.oci-artifacts'),
      allowedHosts,
      ...(proxies === undefined ? {} : { proxies }),
    }),
    // Beside them too, skipped by the Git cache's budget as well.
    helmRepositorySource: createHelmRepositorySource({
      ...settings.helm,
      ...(settings.oci?.limits === undefined ? {} : { limits: settings.oci.limits }),
      cacheDir: path.join(cacheDir, '.helm-charts'),
      allowedHosts,
      proxies,
    }),
  });
}

/** @internal The adapters of sources already made (a test's Git source of its own). */
export function sourceAdapters({
  gitSource,
  ociSource,
  helmRepositorySource,
  githubApps,
}: {
  readonly gitSource: GitSource;
  /** Undefined: a token cache of its own, any API host (the Git source's policy still applies to Git). */
  readonly githubApps?: GitHubAppSettings | undefined;
  /** Undefined: an ApplySet naming an `oci://` source stalls (SourceNotSupported). */
  readonly ociSource?: OciSource | undefined;
  /** Undefined: an ApplySet naming a chart of an https:// repository stalls (SourceNotSupported). */
  readonly helmRepositorySource?: HelmRepositorySource | undefined;
}): SourceAdapters {
  return {
    git: githubApps === undefined ? gitAdapter(gitSource) : gitAdapter(gitSource, githubApps),
    ...(ociSource === undefined ? {} : { oci: ociAdapter(ociSource) }),
    ...(helmRepositorySource === undefined ? {} : { helm: helmRepositoryAdapter(helmRepositorySource) }),
  };
}
