import {
  DEFAULT_GIT_CACHE_MAX_BYTES,
  DEFAULT_GIT_CACHE_MAX_REPOSITORY_BYTES,
} from '../git/git-cache-budget.js';
import { DEFAULT_GIT_FETCH_LIMITS } from '../git/git-fetch-limits.js';
import { DEFAULT_ARTIFACT_LIMITS } from '../source/oci/artifact-limits.js';
import { DEFAULT_OCI_CACHE_MAX_BYTES } from '../source/oci/oci-source.js';
import type { ControllerConfig } from '../controller/runtime/controller-config.js';
import { UsageError } from './parse-command-line.js';

/** The controller's bounds on what a repository may cost it: parseArgs options, parsed below. */
export const GIT_LIMIT_OPTIONS = {
  'git-max-object-bytes': { type: 'string' },
  'git-max-fetch-bytes': { type: 'string' },
  'git-max-fetch-objects': { type: 'string' },
  'git-cache-max-bytes': { type: 'string' },
  'git-cache-max-repository-bytes': { type: 'string' },
  'oci-max-layer-bytes': { type: 'string' },
  'oci-max-expanded-bytes': { type: 'string' },
  'oci-max-files': { type: 'string' },
  'oci-max-file-bytes': { type: 'string' },
  'oci-cache-max-bytes': { type: 'string' },
} as const;

export const GIT_LIMIT_USAGE = `Git bounds (each refusal stalls only the ApplySet whose repository crosses it, reason
RepositoryTooLarge, naming the flag): --git-max-object-bytes (16Mi: the largest object, by the size in
its pack header, before it is inflated), --git-max-fetch-bytes (48Mi: what one fetch may download),
--git-max-fetch-objects (50000: objects in one fetched pack). The cache on disk: --git-cache-max-bytes
(768Mi in total; repositories used least recently are removed), --git-cache-max-repository-bytes
(256Mi: a repository past it starts over at its next fetch). OCI artifacts (reason ArtifactTooLarge):
--oci-max-layer-bytes (50Mi: the layer as downloaded, checked before the download),
--oci-max-expanded-bytes (200Mi: the layer gunzipped), --oci-max-files (10000: files and directories),
--oci-max-file-bytes (10Mi: one file); --oci-cache-max-bytes (256Mi: extracted artifacts kept on disk,
beside the Git cache). Sizes take Ki, Mi and Gi.
`;

type GitLimitFlag = keyof typeof GIT_LIMIT_OPTIONS;

/**
 * `16Mi`, `1Gi`, `500000`: a positive whole number of bytes (or objects, without a unit).
 */
export function parseSizeFlag(flag: string, text: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(text.trim());
  const scale = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[match?.[2] ?? ''] ?? 1;
  const value = match === null ? NaN : Number(match[1]) * scale;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`--${flag} must be a positive number (with Ki, Mi or Gi for sizes), got "${text}"`);
  }
  return value;
}

/** The flags as the controller's config; a flag not given leaves the source's default. */
export function gitLimitConfig(
  values: Partial<Record<GitLimitFlag, string>>,
): Pick<
  ControllerConfig,
  | 'gitFetchLimits'
  | 'gitCacheMaxBytes'
  | 'gitCacheMaxRepositoryBytes'
  | 'ociArtifactLimits'
  | 'ociCacheMaxBytes'
> {
  const size = (flag: GitLimitFlag, fallback: number) => {
    const text = values[flag];
    return text === undefined ? fallback : parseSizeFlag(flag, text);
  };
  return {
    gitFetchLimits: {
      maxObjectBytes: size('git-max-object-bytes', DEFAULT_GIT_FETCH_LIMITS.maxObjectBytes),
      maxFetchBytes: size('git-max-fetch-bytes', DEFAULT_GIT_FETCH_LIMITS.maxFetchBytes),
      maxFetchObjects: size('git-max-fetch-objects', DEFAULT_GIT_FETCH_LIMITS.maxFetchObjects),
    },
    gitCacheMaxBytes: size('git-cache-max-bytes', DEFAULT_GIT_CACHE_MAX_BYTES),
    gitCacheMaxRepositoryBytes: size(
      'git-cache-max-repository-bytes',
      DEFAULT_GIT_CACHE_MAX_REPOSITORY_BYTES,
    ),
    ociArtifactLimits: {
      maxLayerBytes: size('oci-max-layer-bytes', DEFAULT_ARTIFACT_LIMITS.maxLayerBytes),
      maxExpandedBytes: size('oci-max-expanded-bytes', DEFAULT_ARTIFACT_LIMITS.maxExpandedBytes),
      maxFiles: size('oci-max-files', DEFAULT_ARTIFACT_LIMITS.maxFiles),
      maxFileBytes: size('oci-max-file-bytes', DEFAULT_ARTIFACT_LIMITS.maxFileBytes),
    },
    ociCacheMaxBytes: size('oci-cache-max-bytes', DEFAULT_OCI_CACHE_MAX_BYTES),
  };
}
