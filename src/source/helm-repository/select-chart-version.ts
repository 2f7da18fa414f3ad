/**
 * A chart's version chosen from a Helm repository's index.yaml, as `helm pull --version RANGE` chooses:
 * the highest version of the chart that satisfies the range; prereleases only for a range naming one
 * (npm's semver default, which is also Masterminds semver's, helm's). Pure: the index is fetched and
 * parsed by the caller.
 */
import { Range, SemVer, compare, parse, satisfies } from 'semver';
import { isJsonObject } from '../../manifests/json-value.js';
import {
  HelmChartNotFoundError,
  HelmChartVersionNotFoundError,
  HelmRepositoryInvalidError,
} from './helm-repository-error.js';

/** The entry of the version chosen: where its archive is and what it must hash to. */
export interface ChartVersionEntry {
  readonly version: string;
  /** The first of the entry's `urls`, as written: absolute, or relative to the repository. */
  readonly url: string;
  /** `sha256:<hex>` when the index gives the archive's digest. */
  readonly digest: string | undefined;
}

/** How many versions a "no version satisfies" message lists, newest first. */
const VERSIONS_NAMED = 5;
const SHA256_HEX = /^[a-f0-9]{64}$/;

/** What the controller keeps of an index.yaml: each chart's entries that it could use, by chart name. */
export type HelmIndex = ReadonlyMap<string, readonly ChartVersionEntry[]>;

/**
 * The charts of a parsed index.yaml (`entries: {<chart>: [{version, urls, digest}, …]}`), only what a
 * choice needs: an index of thousands of versions is kept as a few strings each. Entries without a
 * version or a URL are passed over. Throws HelmRepositoryInvalidError when the value is not an index.
 */
export function readHelmIndex(value: unknown, where: string): HelmIndex {
  const entries = isJsonObject(value) ? value['entries'] : undefined;
  if (!isJsonObject(entries)) {
    throw new HelmRepositoryInvalidError(
      `${where}: index.yaml holds no entries map; it is not a Helm repository index`,
    );
  }
  const charts = new Map<string, ChartVersionEntry[]>();
  for (const [chart, listed] of Object.entries(entries)) {
    if (!Array.isArray(listed)) continue;
    charts.set(
      chart,
      listed.map(entryOf).filter((entry) => entry !== undefined),
    );
  }
  return charts;
}

/**
 * The entry of `chart` with the highest version satisfying `range`. Versions that are not semantic
 * versions are passed over. Throws HelmChartNotFoundError when the index lists no such chart, and
 * HelmChartVersionNotFoundError (naming the newest versions seen) when no version satisfies the range.
 */
export function selectChartVersion(
  index: HelmIndex,
  chart: string,
  range: string,
  where: string,
): ChartVersionEntry {
  const listed = index.get(chart);
  if (listed === undefined || listed.length === 0) {
    throw new HelmChartNotFoundError(
      `${where}: the index lists no chart ${JSON.stringify(chart)} (spec.helm.chart); nothing was applied`,
    );
  }
  const wanted = new Range(range);
  const versions: { entry: ChartVersionEntry; version: SemVer }[] = [];
  for (const entry of listed) {
    const version = parse(entry.version);
    if (version !== null) versions.push({ entry, version });
  }
  versions.sort((a, b) => compare(b.version, a.version));
  const best = versions.find(({ version }) => satisfies(version, wanted));
  if (best !== undefined) return best.entry;
  const newest = versions.slice(0, VERSIONS_NAMED).map(({ entry }) => entry.version);
  const seen =
    newest.length === 0 ? 'it lists no semantic version' : `the newest listed: ${newest.join(', ')}`;
  throw new HelmChartVersionNotFoundError(
    `${where}: no version of chart ${chart} satisfies spec.helm.version ${JSON.stringify(range)}; ${seen}; nothing was applied`,
  );
}

/** One entry of index.yaml's `entries.<chart>` list, or undefined when it lacks a version or a URL. */
function entryOf(item: unknown): ChartVersionEntry | undefined {
  if (!isJsonObject(item)) return undefined;
  const { version, urls, digest } = item;
  const [url] = Array.isArray(urls) ? urls : [];
  if (typeof version !== 'string' || typeof url !== 'string' || url === '') return undefined;
  const hex = typeof digest === 'string' ? digest.replace(/^sha256:/, '') : undefined;
  return { version, url, digest: hex !== undefined && SHA256_HEX.test(hex) ? `sha256:${hex}` : undefined };
}

/**
 * Where the archive is: an entry's URL as helm reads it, relative ones resolved against the repository
 * URL taken as a directory (`https://h/charts` and `https://h/charts/` both give `https://h/charts/x.tgz`
 * for `x.tgz`). Undefined for a URL that is not http(s).
 */
export function chartArchiveUrl(entryUrl: string, repositoryUrl: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(entryUrl, repositoryUrl.endsWith('/') ? repositoryUrl : `${repositoryUrl}/`);
  } catch {
    return undefined;
  }
  return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined;
}

/** `<url>/index.yaml`: the repository URL taken as a directory, as for an archive. */
export function indexUrl(repositoryUrl: string): URL {
  return new URL('index.yaml', repositoryUrl.endsWith('/') ? repositoryUrl : `${repositoryUrl}/`);
}
