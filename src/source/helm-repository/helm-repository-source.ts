/**
 * Charts of a Helm repository (docs/helm.md, "Charts from a repository"): the repository's index.yaml
 * read (and kept for a reconcile on schedule, as a Git fetch is), the highest version of the chart in
 * spec.helm.version chosen, its archive downloaded within the artifact limits and checked against the
 * index's digest, then extracted as an OCI layer is, into a directory of the cache named by the
 * archive's sha256 (so a chart version is extracted once, however many ApplySets name it).
 * The revision is `<chart>@<version>@sha256:<archive digest>`: a new version in the range is a new
 * revision, and so is a version whose archive was replaced.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { credentialsRefusal } from '../../git/credentials-refusal.js';
import { readYamlValue } from '../../input/read-yaml-value.js';
import { INPUT_BOUNDS, InputParseError } from '../../input/input-bounds.js';
import { ResponseTooLargeError } from '../../net/destination-refused-error.js';
import { helmRepositoryPolicy, type DestinationPolicy } from '../../net/destination-policy.js';
import type { ProxyEnvironment } from '../../net/proxy-environment.js';
import { tlsMaterialIdentity } from '../../net/outbound-tls.js';
import type { SourceConnection } from '../source-connection.js';
import { messageOf } from '../../errors/message-of.js';
import type { SourceHostList } from '../../net/host-list.js';
import { LruMap } from '../../kube/lru-map.js';
import { evictOldest, extractInto, isDirectory } from '../oci/artifact-cache.js';
import {
  DEFAULT_ARTIFACT_LIMITS,
  describeArtifactLimit,
  type ArtifactLimits,
} from '../oci/artifact-limits.js';
import { ArtifactRefusedError } from '../oci/artifact-refused-error.js';
import { extractArtifactLayer } from '../oci/extract-artifact-layer.js';
import { chartDirectory } from './chart-directory.js';
import { basicAuthorization, helmGet } from './helm-repository-client.js';
import {
  HelmChartDigestMismatchError,
  HelmCredentialsNotForHostError,
  HelmIndexTooLargeError,
  HelmRepositoryInvalidError,
} from './helm-repository-error.js';
import {
  chartArchiveUrl,
  indexUrl,
  readHelmIndex,
  selectChartVersion,
  type HelmIndex,
} from './select-chart-version.js';

export interface HelmRepositorySourceOptions {
  /** Where extracted charts are kept, one directory per archive digest. */
  readonly cacheDir: string;
  /** `--allowed-source-hosts`: chart repositories are sources as Git servers are. */
  readonly allowedHosts: SourceHostList;
  /** Another address policy than helmRepositoryPolicy's: the CLI's, for the repository its user named. */
  readonly policy?: DestinationPolicy;
  /** The operator's HTTPS_PROXY, HTTP_PROXY and NO_PROXY. */
  readonly proxies?: ProxyEnvironment | undefined;
  /** Refuse credentials whose Secret names no hosts (`--require-secret-source-hosts`). */
  readonly requireCredentialHosts?: boolean;
  /** A chart archive is bounded as an OCI layer is (its compressed and expanded bytes, its entries). */
  readonly limits?: ArtifactLimits;
  /** The bytes of index.yaml read at most; default 16 MiB. */
  readonly maxIndexBytes?: number;
  /** The bytes of extracted charts kept; default 256 MiB. */
  readonly maxCacheBytes?: number;
  readonly now?: () => number;
}

/** spec.source.secretRef's Basic credentials, and the hosts they are for (`applyset.dev/source-hosts`). */
export interface HelmRepositoryCredentials {
  readonly username: string;
  readonly password: string;
  /** `Secret ns/name`, for messages. */
  readonly from: string;
  readonly hosts?: SourceHostList;
}

interface HelmChartFetch {
  /** The repository, `https://host/path`. */
  readonly url: string;
  readonly chart: string;
  /** spec.helm.version, `*` by default. */
  readonly range: string;
  readonly credentials: HelmRepositoryCredentials | undefined;
  /** An index read younger than this is used as it is. */
  readonly maxAgeMs: number;
  /** spec.source.certSecretRef's TLS material, proxySecretRef's proxy. */
  readonly connection?: SourceConnection;
}

interface FetchedChart {
  /** `web@1.2.0@sha256:…` */
  readonly revision: string;
  /** `sha256:…` of the chart archive. */
  readonly digest: string;
  /** The chart's own directory (its Chart.yaml at the top), read-only by convention: shared. */
  readonly directory: string;
}

export type HelmRepositorySource = (request: HelmChartFetch, signal: AbortSignal) => Promise<FetchedChart>;

const MiB = 1024 * 1024;
const DEFAULT_INDEX_MAX_BYTES = INPUT_BOUNDS['helm-index'].maxBytes;
const DEFAULT_CHART_CACHE_MAX_BYTES = 256 * MiB;
/** Indexes kept, by repository and credentials: each is a few strings per chart version. */
const INDEX_MEMO_ENTRIES = 64;

export function createHelmRepositorySource(options: HelmRepositorySourceOptions): HelmRepositorySource {
  const limits = options.limits ?? DEFAULT_ARTIFACT_LIMITS;
  const policy = options.policy ?? helmRepositoryPolicy(options.allowedHosts, options.proxies);
  const now = options.now ?? Date.now;
  const indexes = new LruMap<string, { readonly at: number; readonly index: HelmIndex }>(INDEX_MEMO_ENTRIES);
  return async (request, signal) => {
    const { url, chart, credentials } = request;
    refuseCredentialsElsewhere(url, credentials, options.requireCredentialHosts === true);
    const origin = new URL(url).origin;
    const authorization =
      credentials === undefined ? undefined : basicAuthorization(credentials.username, credentials.password);
    const access = { policy, origin, authorization, connection: request.connection };
    // The index is kept per repository, credentials and TLS material: one Secret's read never serves another's.
    const key = `${url}\0${authorization === undefined ? '' : createHash('sha256').update(authorization).digest('hex')}${tlsMaterialIdentity(request.connection?.tls)}`;
    const kept = indexes.get(key);
    let index = kept !== undefined && now() - kept.at < request.maxAgeMs ? kept.index : undefined;
    if (index === undefined) {
      index = await fetchIndex(url, access, options.maxIndexBytes ?? DEFAULT_INDEX_MAX_BYTES, signal);
      indexes.set(key, { at: now(), index });
    }
    const entry = selectChartVersion(index, chart, request.range, url);
    const archiveUrl = chartArchiveUrl(entry.url, url);
    const where = `${url} chart ${chart} ${entry.version}`;
    if (archiveUrl === undefined) {
      throw new HelmRepositoryInvalidError(
        `${where}: the index gives no http(s) URL for it; nothing was applied`,
      );
    }
    // An archive the index names by digest and that is extracted already is not downloaded again.
    if (entry.digest !== undefined && (await isDirectory(extractedPath(options.cacheDir, entry.digest)))) {
      return chartOf(chart, entry.version, entry.digest, options.cacheDir);
    }
    const archive = await fetchArchive(archiveUrl, access, { limits, where }, signal);
    const digest = `sha256:${createHash('sha256').update(archive).digest('hex')}`;
    if (entry.digest !== undefined && entry.digest !== digest) {
      throw new HelmChartDigestMismatchError(
        `${where}: the archive downloaded has digest ${digest}, the index says ${entry.digest}; nothing of it was used`,
      );
    }
    const extracted = extractedPath(options.cacheDir, digest);
    if (!(await isDirectory(extracted))) {
      await extractInto(extracted, (target) =>
        extractArtifactLayer(chunksOf(archive), target, { limits, signal, describe: `${where}@${digest}` }),
      );
      await evictOldest(options.cacheDir, options.maxCacheBytes ?? DEFAULT_CHART_CACHE_MAX_BYTES, extracted);
    }
    return chartOf(chart, entry.version, digest, options.cacheDir);
  };
}

/** Where the archive of `digest` is extracted: `<cache>/sha256-<hex>`. */
function extractedPath(cacheDir: string, digest: string): string {
  return path.join(cacheDir, digest.replace(':', '-'));
}

async function chartOf(
  chart: string,
  version: string,
  digest: string,
  cacheDir: string,
): Promise<FetchedChart> {
  const directory = await chartDirectory(
    extractedPath(cacheDir, digest),
    `chart ${chart} ${version}@${digest}`,
  );
  return { revision: `${chart}@${version}@${digest}`, digest, directory };
}

/** Credentials go only to a host their Secret names, as a Git source's do (credentials-refusal.ts). */
function refuseCredentialsElsewhere(
  url: string,
  credentials: HelmRepositoryCredentials | undefined,
  requireHosts: boolean,
): void {
  if (credentials === undefined) return;
  const refusal = credentialsRefusal(url, credentials.hosts, requireHosts);
  if (refusal !== undefined) {
    throw new HelmCredentialsNotForHostError(
      `credentials not sent to ${url}: ${credentials.from} ${refusal}`,
    );
  }
}

interface Access {
  readonly policy: DestinationPolicy;
  readonly origin: string;
  readonly authorization: string | undefined;
  readonly connection: SourceConnection | undefined;
}

async function fetchIndex(
  url: string,
  access: Access,
  maxBytes: number,
  signal: AbortSignal,
): Promise<HelmIndex> {
  const what = `${url}: index.yaml`;
  const tooLarge = (cause: unknown) =>
    new HelmIndexTooLargeError(
      `${what} is larger than ${maxBytes} bytes, the most the controller reads of an index; nothing was applied`,
      { cause },
    );
  let body: Buffer;
  try {
    body = await helmGet(access.policy, { url: indexUrl(url), ...access, maxBytes, what }, signal);
  } catch (error) {
    throw error instanceof ResponseTooLargeError ? tooLarge(error) : error;
  }
  let value: unknown;
  try {
    value = readYamlValue(body.toString('utf8'), what, 'helm-index');
  } catch (error) {
    if (error instanceof InputParseError && error.problem === 'too-large') throw tooLarge(error);
    throw new HelmRepositoryInvalidError(`${messageOf(error)}; nothing was applied`, { cause: error });
  }
  return readHelmIndex(value, url);
}

/** The chart's archive, within the artifact limits' compressed bound. */
async function fetchArchive(
  url: URL,
  access: Access,
  { limits, where }: { readonly limits: ArtifactLimits; readonly where: string },
  signal: AbortSignal,
): Promise<Buffer> {
  try {
    return await helmGet(
      access.policy,
      { url, ...access, maxBytes: limits.maxLayerBytes, what: `${where}: its archive` },
      signal,
    );
  } catch (error) {
    if (!(error instanceof ResponseTooLargeError)) throw error;
    throw new ArtifactRefusedError(
      'ArtifactTooLarge',
      where,
      `has an archive larger than ${describeArtifactLimit(limits, 'maxLayerBytes')}`,
      { cause: error },
    );
  }
}

/** The downloaded archive as the extraction reads a layer: a stream of chunks, here one. */
async function* chunksOf(archive: Buffer): AsyncIterable<Uint8Array> {
  yield archive;
}
