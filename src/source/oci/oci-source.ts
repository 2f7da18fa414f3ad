/**
 * The OCI adapter of a reconcile's source step (docs/oci-sources.md): the artifact a tag or digest
 * names (or the highest tag a semver range matches) is resolved to its manifest digest, its cosign
 * signature verified when the ApplySet asks, and its one tar+gzip layer extracted, under the artifact
 * limits, into a directory of the cache named by the layer's digest (so an artifact is downloaded
 * once, however many ApplySets name it).
 * The revision is `tag@sha256:<manifest digest>`, or the digest itself: a tag moved to another
 * manifest is a new revision, as is a new highest tag of a semver range, and a digest never changes.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { ResolvedSourceRef } from '../../api/applyset-types.js';
import { ociPolicy, type DestinationPolicy } from '../../net/destination-policy.js';
import type { ProxyEnvironment } from '../../net/proxy-environment.js';
import type { SourceHostList } from '../../net/host-list.js';
import { LruMap } from '../../kube/lru-map.js';
import { evictOldest, extractInto, isDirectory } from './artifact-cache.js';
import { DEFAULT_ARTIFACT_LIMITS, describeArtifactLimit, type ArtifactLimits } from './artifact-limits.js';
import { ArtifactRefusedError } from './artifact-refused-error.js';
import { extractArtifactLayer } from './extract-artifact-layer.js';
import { chartDirectory } from '../helm-repository/chart-directory.js';
import { parseOciUrl } from './oci-reference.js';
import type { CredentialsFor } from './pull-secret.js';
import { createRegistryClient, type RegistryClient } from './registry-client.js';
import type { SourceConnection } from '../source-connection.js';
import { ArtifactInvalidError } from './registry-error.js';
import { selectSemverTag } from './select-semver-tag.js';
import { verifyCosignSignature, type CosignPublicKey } from './verify-cosign.js';

export type OciSourceOptions = {
  /** Where extracted layers are kept, one directory per layer digest. */
  readonly cacheDir: string;
  readonly limits?: ArtifactLimits;
  /**
   * The bytes of extracted layers kept (`--oci-cache-max-bytes`); past it the least recently
   * extracted are removed. Default 256 MiB.
   */
  readonly maxCacheBytes?: number;
} & (
  | {
      /** `--allowed-source-hosts`: registries are sources as Git servers are (ociPolicy). */
      readonly allowedHosts: SourceHostList;
      /** The operator's HTTPS_PROXY, HTTP_PROXY and NO_PROXY. */
      readonly proxies?: ProxyEnvironment;
    }
  | {
      /** Another address policy: the CLI's cliOciPolicy, for the registry its user named. */
      readonly policy: DestinationPolicy;
    }
);

interface OciFetchRequest {
  /** `oci://host/repository` */
  readonly url: string;
  readonly ref: ResolvedSourceRef;
  readonly insecure: boolean;
  readonly credentialsFor: CredentialsFor;
  /** The cosign public keys the artifact must be signed with; undefined: not verified. */
  readonly keys: readonly CosignPublicKey[] | undefined;
  /** How messages name where credentials and keys come from; the ApplySet's fields by default. */
  readonly wording?: OciWording;
  /** spec.source.certSecretRef's TLS material, proxySecretRef's proxy. */
  readonly connection?: SourceConnection;
}

interface OciWording {
  /** Completes `HOST asks for credentials, and …` when none are had for HOST. */
  readonly noCredentials?: (host: string) => string;
  /** Completes `none of its N cosign signature(s) verifies with …`. */
  readonly keys?: string;
}

export interface FetchedArtifact {
  /** `v1@sha256:…`, or `sha256:…` for a digest ref. */
  readonly revision: string;
  readonly digest: string;
  /** The artifact's files, read-only by convention: shared by every ApplySet naming it. */
  readonly directory: string;
}

export type OciSource = (request: OciFetchRequest, signal: AbortSignal) => Promise<FetchedArtifact>;

/**
 * The chart archive of an artifact `helm push` made (config `application/vnd.cncf.helm.config.v1+json`):
 * its tree is the chart's top-level directory. Its provenance layer, if any, is not read.
 */
const HELM_CHART_LAYER_TYPE = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';

/**
 * The layer types read: Flux's (`flux push artifact`), a plain OCI tar+gzip layer (`oras push`) and a
 * Helm chart's (`helm push`).
 */
const LAYER_TYPES: readonly string[] = [
  'application/vnd.cncf.flux.content.v1.tar+gzip',
  'application/vnd.oci.image.layer.v1.tar+gzip',
  HELM_CHART_LAYER_TYPE,
];

export const DEFAULT_OCI_CACHE_MAX_BYTES = 256 * 1024 * 1024;

/** Artifacts whose signature verified, remembered by digest and key set (bounded). */
const VERIFIED_MEMO_ENTRIES = 4096;

export function createOciSource(options: OciSourceOptions): OciSource {
  const limits = options.limits ?? DEFAULT_ARTIFACT_LIMITS;
  const policy = 'policy' in options ? options.policy : ociPolicy(options.allowedHosts, options.proxies);
  // A digest names content that never changes: once its signature verified with a set of keys, it
  // verifies with them for good. A reconcile at rest then asks the registry only for the tag's digest;
  // a new digest, or another set of keys (a rotation), is verified again.
  const verified = new LruMap<string, true>(VERIFIED_MEMO_ENTRIES);
  return async (request, signal) => {
    const repository = parseOciUrl(request.url);
    if ('problem' in repository) throw new ArtifactInvalidError(`spec.source.url ${repository.problem}`);
    const client = createRegistryClient(repository, {
      policy,
      connection: request.connection,
      plainHttp: request.insecure,
      credentialsFor: request.credentialsFor,
      ...(request.wording?.noCredentials === undefined
        ? {}
        : { noCredentials: request.wording.noCredentials }),
    });
    const where = request.url;
    const reference = await referenceOf(request.ref, client, where, signal);
    const { digest, manifest } = await client.manifest(reference, signal);
    const layer = artifactLayer(manifest, `${where}@${digest}`);
    if (layer.size > limits.maxLayerBytes) {
      const limit = describeArtifactLimit(limits, 'maxLayerBytes');
      throw new ArtifactRefusedError(
        'ArtifactTooLarge',
        `${where}@${digest}`,
        `has a layer of ${layer.size} bytes, over ${limit}`,
      );
    }
    const verifiedAs = request.keys === undefined ? undefined : verifiedKey(where, digest, request.keys);
    if (request.keys !== undefined && verifiedAs !== undefined && !verified.has(verifiedAs)) {
      await verifyCosignSignature(
        client,
        { where, digest, ...(request.wording?.keys === undefined ? {} : { keysFrom: request.wording.keys }) },
        request.keys,
        signal,
      );
      verified.set(verifiedAs, true);
    }
    const directory = path.join(options.cacheDir, layer.digest.replace(':', '-'));
    if (!(await isDirectory(directory))) {
      const body = await client.blob(layer.digest, layer.size, signal);
      await extractInto(directory, (target) =>
        extractArtifactLayer(body, target, { limits, signal, describe: `${where}@${digest}` }),
      );
      await evictOldest(options.cacheDir, options.maxCacheBytes ?? DEFAULT_OCI_CACHE_MAX_BYTES, directory);
    }
    const revision = request.ref.type === 'digest' ? digest : `${reference}@${digest}`;
    const tree =
      layer.mediaType === HELM_CHART_LAYER_TYPE
        ? await chartDirectory(directory, `${where}@${digest}`)
        : directory;
    return { revision, digest, directory: tree };
  };
}

/** The artifact and the keys its signature verified with, as the memo of verified artifacts knows them. */
function verifiedKey(where: string, digest: string, keys: readonly CosignPublicKey[]): string {
  const keySet = createHash('sha256');
  for (const pem of keys.map((key) => key.pem.trim()).sort()) keySet.update(pem).update('\0');
  return `${where}@${digest} ${keySet.digest('hex')}`;
}

/** What the manifest is asked for by: the tag, the highest tag the range matches, or the digest. */
async function referenceOf(
  ref: ResolvedSourceRef,
  client: RegistryClient,
  where: string,
  signal: AbortSignal,
): Promise<string> {
  switch (ref.type) {
    case 'tag':
      return ref.name;
    case 'semver':
      return selectSemverTag(await client.tags(signal), ref.range, where);
    case 'digest':
      return ref.digest;
    default:
      // The resolver gives an oci:// source a tag, a semver range or a digest only.
      throw new ArtifactInvalidError(
        `an oci:// source takes a tag, a semver range or a digest, not a ${ref.type}`,
      );
  }
}

/** The one tar+gzip layer of the manifest. */
function artifactLayer(
  manifest: Readonly<Record<string, unknown>>,
  where: string,
): { mediaType: string; digest: string; size: number } {
  const layers = Array.isArray(manifest['layers']) ? (manifest['layers'] as unknown[]) : [];
  const found = layers.find(
    (layer): layer is { mediaType: string; digest: string; size: number } =>
      typeof layer === 'object' &&
      layer !== null &&
      LAYER_TYPES.includes(String((layer as { mediaType?: unknown }).mediaType)) &&
      typeof (layer as { digest?: unknown }).digest === 'string' &&
      /^sha256:[a-f0-9]{64}$/.test((layer as { digest: string }).digest) &&
      typeof (layer as { size?: unknown }).size === 'number',
  );
  if (found === undefined) {
    throw new ArtifactInvalidError(
      `${where} has no tar+gzip layer (${LAYER_TYPES.join(' or ')}): it is not an artifact of manifests; nothing was applied`,
    );
  }
  return { mediaType: found.mediaType, digest: found.digest, size: found.size };
}
