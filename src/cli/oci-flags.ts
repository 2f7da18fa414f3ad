/**
 * `applyset apply --oci oci://HOST/REPO (--tag TAG | --digest sha256:…) [--path DIR] [--insecure]
 * [--verify-key FILE.pub …]`: an OCI artifact as the input, named as an ApplySet's spec.source names
 * it (url, ref.tag or ref.digest, path, insecure, verify). Read here into what the fetch needs.
 */
import type { ResolvedSourceRef } from '../api/applyset-types.js';
import { normalizeSourcePath } from '../api/resolve-source-spec.js';
import { DEFAULT_ARTIFACT_LIMITS, type ArtifactLimits } from '../source/oci/artifact-limits.js';
import { OCI_DIGEST, OCI_TAG, parseOciUrl } from '../source/oci/oci-reference.js';
import { parseSizeFlag } from './git-limit-flags.js';
import { flagIsTrue, single, UsageError, type ParsedFlags } from './parse-command-line.js';

export const OCI_FLAGS = {
  oci: { type: 'string' },
  tag: { type: 'string' },
  digest: { type: 'string' },
  path: { type: 'string' },
  insecure: { type: 'boolean' },
  'verify-key': { type: 'string', repeats: true },
  // The controller's bounds on one artifact, by the controller's names (the refusals name them).
  'oci-max-layer-bytes': { type: 'string' },
  'oci-max-expanded-bytes': { type: 'string' },
  'oci-max-files': { type: 'string' },
  'oci-max-file-bytes': { type: 'string' },
} as const;

const LIMIT_FLAGS: Readonly<Record<keyof ArtifactLimits, keyof typeof OCI_FLAGS>> = {
  maxLayerBytes: 'oci-max-layer-bytes',
  maxExpandedBytes: 'oci-max-expanded-bytes',
  maxFiles: 'oci-max-files',
  maxFileBytes: 'oci-max-file-bytes',
};

/** The artifact `--oci` names, and how it is fetched and read. */
export interface OciInput {
  /** `oci://host[:port]/repository`. */
  readonly url: string;
  /** `host` or `host:port`. */
  readonly host: string;
  readonly ref: Extract<ResolvedSourceRef, { type: 'tag' } | { type: 'digest' }>;
  /** `--path`, normalized: relative, no `..`; `''` is the artifact's root. */
  readonly path: string;
  /** `--insecure`: plain HTTP, as spec.source.insecure. */
  readonly insecure: boolean;
  /** `--verify-key FILE` (repeats): cosign public keys; empty: the signature is not checked. */
  readonly verifyKeys: readonly string[];
  /** `--oci-max-*`: what the artifact may cost, the controller's defaults where not given. */
  readonly limits: ArtifactLimits;
}

/** How messages name the artifact: `oci://host/repo:v1`, `oci://host/repo@sha256:…`. */
export function ociArtifactName(input: Pick<OciInput, 'url' | 'ref'>): string {
  return input.ref.type === 'tag' ? `${input.url}:${input.ref.name}` : `${input.url}@${input.ref.digest}`;
}

/** `--oci` and its flags; undefined without `--oci`, whose flags alone are a usage error. */
export function ociInputOf(flags: ParsedFlags): OciInput | undefined {
  const url = single(flags, 'oci');
  if (url === undefined) {
    const stray = Object.keys(OCI_FLAGS).find((name) => flags.has(name));
    if (stray !== undefined) throw new UsageError(`--${stray} is for --oci`);
    return undefined;
  }
  const repository = parseOciUrl(url);
  if ('problem' in repository) throw new UsageError(`--oci ${repository.problem}`);
  const tag = single(flags, 'tag');
  const digest = single(flags, 'digest');
  if ((tag === undefined) === (digest === undefined)) {
    throw new UsageError('--oci takes exactly one of --tag TAG or --digest sha256:<64 hex digits>');
  }
  if (tag !== undefined && !OCI_TAG.test(tag)) {
    throw new UsageError(
      `--tag must be an OCI tag ([A-Za-z0-9_][A-Za-z0-9._-], at most 128 characters), got ${JSON.stringify(tag)}`,
    );
  }
  if (digest !== undefined && !OCI_DIGEST.test(digest)) {
    throw new UsageError(
      `--digest must be sha256: and 64 lowercase hex digits, got ${JSON.stringify(digest)}`,
    );
  }
  const given = single(flags, 'path') ?? '';
  const path = normalizeSourcePath(given);
  if (path === undefined) {
    throw new UsageError(
      `--path must be relative to the artifact's root, without .., got ${JSON.stringify(given)}`,
    );
  }
  const verifyKeys = flags.get('verify-key') ?? [];
  if (verifyKeys.includes('')) throw new UsageError('--verify-key needs a file name, got ""');
  return {
    // As messages name it: the host in lowercase, as the registry client writes it.
    url: `oci://${repository.host}/${repository.repository}`,
    host: repository.host,
    ref: tag !== undefined ? { type: 'tag', name: tag } : { type: 'digest', digest: digest ?? '' },
    path,
    insecure: flagIsTrue(flags, 'insecure'),
    verifyKeys,
    limits: limitsOf(flags),
  };
}

function limitsOf(flags: ParsedFlags): ArtifactLimits {
  const limits: Record<keyof ArtifactLimits, number> = { ...DEFAULT_ARTIFACT_LIMITS };
  for (const [key, flag] of Object.entries(LIMIT_FLAGS) as [keyof ArtifactLimits, string][]) {
    const text = single(flags, flag);
    if (text !== undefined) limits[key] = parseSizeFlag(flag, text);
  }
  return limits;
}
