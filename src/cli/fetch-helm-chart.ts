/**
 * `applyset apply --helm-chart` of a chart that is not on disk, fetched as the controller fetches an
 * ApplySet's chart (src/source/helm-repository/, src/source/oci/): `oci://HOST/PATH/CHART`, `NAME
 * --repo URL`, or `REPO/NAME` with REPO a repository of helm's own `repositories.yaml` (what `helm repo
 * add` wrote). `--version` is a semver range, as spec.helm.version; default the highest stable version.
 * The chart is extracted under the artifact limits into a temporary directory, removed once rendered.
 * Every failure of the fetch is one line naming the chart, before the cluster is contacted.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { messageOf } from '../errors/message-of.js';
import { readYamlValue } from '../input/read-yaml-value.js';
import { cliHelmChartPolicy, cliOciPolicy } from '../net/destination-policy.js';
import { parseSourceHostList } from '../net/host-list.js';
import { createHelmRepositorySource } from '../source/helm-repository/helm-repository-source.js';
import { DEFAULT_ARTIFACT_LIMITS } from '../source/oci/artifact-limits.js';
import { parseOciUrl } from '../source/oci/oci-reference.js';
import { createOciSource } from '../source/oci/oci-source.js';
import type { CliIo } from './cli-io.js';
import type { HelmInput } from './helm-flags.js';
import { UsageError } from './parse-command-line.js';
import { OciInputError, readDockerConfig } from './read-oci-manifests.js';

/** The whole fetch (index, archive) has this long, as `--oci`'s has. */
const FETCH_DEADLINE_MS = 5 * 60_000;

/** A chart fetched: its directory (Chart.yaml at the top) and how messages name it. */
export interface FetchedHelmChart {
  readonly directory: string;
  /** `oci://host/charts/web@1.2.0`, `https://charts.example.com web@1.2.0`. */
  readonly name: string;
  readonly remove: () => Promise<void>;
}

/** Where a chart that is not a directory comes from. */
type RemoteChart =
  | { readonly kind: 'oci'; readonly url: string; readonly host: string }
  | {
      readonly kind: 'repository';
      readonly url: string;
      readonly chart: string;
      readonly credentials?: { readonly username: string; readonly password: string };
      /** `helm repo add`'s name, for messages. */
      readonly alias?: string;
    };

/**
 * The chart `--helm-chart` names when it is not a directory on disk, fetched; undefined for a directory
 * (rendered in place). A name that is neither is a usage error.
 */
export async function fetchHelmChart(
  helm: HelmInput,
  io: Pick<CliIo, 'cwd' | 'env' | 'stderr'>,
): Promise<FetchedHelmChart | undefined> {
  const remote = await remoteChartOf(helm, io);
  if (remote === undefined) return undefined;
  const range = helm.version ?? '*';
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'applyset-helm-chart-'));
  const remove = () => rm(cacheDir, { recursive: true, force: true });
  const named = remote.kind === 'oci' ? remote.url : `${remote.alias ?? remote.url} chart ${remote.chart}`;
  const deadline = AbortSignal.timeout(FETCH_DEADLINE_MS);
  try {
    const fetched =
      remote.kind === 'oci'
        ? await fetchOciChart(remote, range, { cacheDir, io, deadline, plainHttp: helm.plainHttp })
        : await fetchRepositoryChart(remote, range, { cacheDir, deadline });
    io.stderr.write(`fetched ${named} ${fetched.version} (${fetched.digest})\n`);
    return { directory: fetched.directory, name: `${named}@${fetched.version}`, remove };
  } catch (error) {
    await remove();
    if (error instanceof UsageError) throw error;
    const why = deadline.aborted ? 'not fetched within 5m' : messageOf(error).replace(/\s*\n\s*/g, ' ');
    throw new OciInputError(
      `--helm-chart ${named}: ${why.replace(/;? ?nothing was applied$/, '')}; nothing was written`,
      {
        cause: error,
      },
    );
  }
}

async function fetchOciChart(
  remote: Extract<RemoteChart, { kind: 'oci' }>,
  range: string,
  {
    cacheDir,
    io,
    deadline,
    plainHttp,
  }: { cacheDir: string; io: Pick<CliIo, 'env'>; deadline: AbortSignal; plainHttp: boolean },
): Promise<{ directory: string; version: string; digest: string }> {
  const docker = await readDockerConfig(io.env);
  const fetch = createOciSource({
    cacheDir,
    policy: cliOciPolicy(parseSourceHostList(new URL(`https://${remote.host}/`).hostname)),
    limits: DEFAULT_ARTIFACT_LIMITS,
  });
  const artifact = await fetch(
    {
      url: remote.url,
      ref: { type: 'semver', range },
      insecure: plainHttp,
      credentialsFor: docker.credentialsFor,
      keys: undefined,
      wording: { noCredentials: docker.missing },
    },
    deadline,
  );
  // `1.2.0@sha256:…`: the tag chosen, then the digest.
  const [version = artifact.revision] = artifact.revision.split('@');
  return { directory: artifact.directory, version, digest: artifact.digest };
}

async function fetchRepositoryChart(
  remote: Extract<RemoteChart, { kind: 'repository' }>,
  range: string,
  { cacheDir, deadline }: { cacheDir: string; deadline: AbortSignal },
): Promise<{ directory: string; version: string; digest: string }> {
  const host = new URL(remote.url).hostname;
  const fetch = createHelmRepositorySource({
    cacheDir,
    allowedHosts: [],
    policy: cliHelmChartPolicy(parseSourceHostList(host)),
  });
  const credentials =
    remote.credentials === undefined
      ? undefined
      : // helm's repositories.yaml binds them to the repository: sent to its host only.
        { ...remote.credentials, from: `helm repository ${remote.alias ?? remote.url}`, hosts: [host] };
  const chart = await fetch(
    { url: remote.url, chart: remote.chart, range, credentials, maxAgeMs: 0 },
    deadline,
  );
  // `web@1.2.0@sha256:…`
  const [, version = chart.revision] = chart.revision.split('@');
  return { directory: chart.directory, version, digest: chart.digest };
}

/** oci://, --repo, a directory on disk, or REPO/NAME of helm's repositories.yaml, in that order. */
async function remoteChartOf(
  helm: HelmInput,
  io: Pick<CliIo, 'cwd' | 'env'>,
): Promise<RemoteChart | undefined> {
  if (helm.chart.startsWith('oci://')) {
    const repository = parseOciUrl(helm.chart);
    if ('problem' in repository) throw new UsageError(`--helm-chart ${repository.problem}`);
    return { kind: 'oci', url: `oci://${repository.host}/${repository.repository}`, host: repository.host };
  }
  if (helm.repo !== undefined) return { kind: 'repository', url: helm.repo, chart: helm.chart };
  const alias = /^([^/]+)\/([^/]+)$/.exec(helm.chart);
  if (alias === null || (await isDirectory(path.resolve(io.cwd, helm.chart)))) {
    if (helm.version !== undefined) {
      throw new UsageError(
        `--version is for a chart of a repository or registry, not the directory ${helm.chart}`,
      );
    }
    return undefined; // A directory; one that is not there is said by read-helm-chart (no Chart.yaml).
  }
  const [, repoName = '', chart = ''] = alias;
  const file = repositoriesFile(io.env);
  const entry = (await readHelmRepositories(file)).find((repository) => repository.name === repoName);
  if (entry === undefined) {
    throw new UsageError(
      `--helm-chart ${helm.chart}: no directory ${helm.chart}, and helm's ${file} names no repository ${repoName} (helm repo add ${repoName} URL, or --repo URL)`,
    );
  }
  return {
    kind: 'repository',
    url: entry.url,
    chart,
    alias: repoName,
    ...(entry.username === '' && entry.password === ''
      ? {}
      : { credentials: { username: entry.username, password: entry.password } }),
  };
}

/** helm's `repositories.yaml`: $HELM_REPOSITORY_CONFIG, else in $HELM_CONFIG_HOME, $XDG_CONFIG_HOME/helm or ~/.config/helm. */
function repositoriesFile(env: CliIo['env']): string {
  if (env['HELM_REPOSITORY_CONFIG']) return env['HELM_REPOSITORY_CONFIG'];
  const config =
    env['HELM_CONFIG_HOME'] ||
    path.join(env['XDG_CONFIG_HOME'] || path.join(env['HOME'] || homedir(), '.config'), 'helm');
  return path.join(config, 'repositories.yaml');
}

interface HelmRepositoryEntry {
  readonly name: string;
  readonly url: string;
  readonly username: string;
  readonly password: string;
}

/** The repositories `helm repo add` wrote; no file is none. */
async function readHelmRepositories(file: string): Promise<HelmRepositoryEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return [];
    throw new UsageError(`${file}: cannot read helm's repositories (${messageOf(error)})`);
  }
  let value: unknown;
  try {
    // The user's own configuration, bounded as a kubeconfig is.
    value = readYamlValue(text, file, 'kubeconfig');
  } catch (error) {
    throw new UsageError(`${file}: cannot read helm's repositories (${messageOf(error)})`);
  }
  const repositories = (value as { repositories?: unknown } | null)?.repositories;
  if (!Array.isArray(repositories)) return [];
  const text_ = (item: Record<string, unknown>, key: string) =>
    typeof item[key] === 'string' ? (item[key] as string) : '';
  return repositories
    .filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null)
    .map((item) => ({
      name: text_(item, 'name'),
      url: text_(item, 'url'),
      username: text_(item, 'username'),
      password: text_(item, 'password'),
    }))
    .filter((item) => item.name !== '' && item.url !== '');
}

async function isDirectory(directory: string): Promise<boolean> {
  try {
    return (await stat(directory)).isDirectory();
  } catch {
    return false;
  }
}
