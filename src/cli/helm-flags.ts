/**
 * `applyset apply --helm-chart DIR|REPO/NAME|oci://… [--repo URL] [--version RANGE] [--values FILE …]
 * [--set KEY=VALUE …] [--release-name NAME] [--include-crds=false] [--prune-crds] [--skip-tests=false]`:
 * a chart as the input, rendered as an ApplySet's spec.helm renders its chart. Read here into what the
 * render needs.
 */
import { validRange } from 'semver';
import { DNS1123_SUBDOMAIN } from '../api/spec-fields.js';
import { flagIsTrue, single, UsageError, type ParsedFlags } from './parse-command-line.js';

export const HELM_FLAGS = {
  'helm-chart': { type: 'string' },
  repo: { type: 'string' },
  version: { type: 'string' },
  'plain-http': { type: 'boolean' },
  values: { type: 'string', repeats: true },
  set: { type: 'string', repeats: true },
  'release-name': { type: 'string' },
  'include-crds': { type: 'boolean' },
  'prune-crds': { type: 'boolean' },
  'skip-tests': { type: 'boolean' },
} as const;

/** Helm's own limit on a release name. */
const MAX_RELEASE_NAME = 53;

/** The chart `--helm-chart` names, and how it is rendered. */
export interface HelmInput {
  /**
   * As given: a directory (relative to the working directory, or absolute), `oci://HOST/PATH/CHART`,
   * a chart name of `--repo`, or `REPO/NAME` of helm's repositories.yaml (src/cli/fetch-helm-chart.ts).
   */
  readonly chart: string;
  /** `--repo URL`: the Helm repository (`https://`, its index.yaml) `chart` is a chart of. */
  readonly repo: string | undefined;
  /** `--version`: a semver range of the chart's versions (a remote chart's only); default the highest stable. */
  readonly version: string | undefined;
  /** `--plain-http`: an `oci://` chart's registry over HTTP, as helm's flag of that name. */
  readonly plainHttp: boolean;
  /** `--values`, as given, in order (helm's later files win). */
  readonly valuesFiles: readonly string[];
  /** `--set`, in order, passed to helm as typed (its syntax: `a.b=1,c[0]=x`). */
  readonly set: readonly string[];
  /** `--release-name`; undefined: the --applyset name, as an ApplySet's release is its name. */
  readonly releaseName: string | undefined;
  readonly includeCRDs: boolean;
  /** `--prune-crds`: the objects of the chart's crds/ are pruned like the rest; default kept. */
  readonly pruneCRDs: boolean;
  readonly skipTests: boolean;
}

/** `--helm-chart` and its flags; undefined without it, whose flags alone are a usage error. */
export function helmInputOf(flags: ParsedFlags): HelmInput | undefined {
  const chart = single(flags, 'helm-chart');
  if (chart === undefined) {
    const stray = Object.keys(HELM_FLAGS).find((name) => flags.has(name));
    if (stray !== undefined) throw new UsageError(`--${stray} is for --helm-chart`);
    return undefined;
  }
  if (chart === '')
    throw new UsageError('--helm-chart needs a chart (a directory, oci://…, REPO/NAME), got ""');
  const valuesFiles = flags.get('values') ?? [];
  if (valuesFiles.includes('')) throw new UsageError('--values needs a file name, got ""');
  const set = flags.get('set') ?? [];
  const bad = set.find((value) => !value.includes('=') || value.startsWith('='));
  if (bad !== undefined) throw new UsageError(`--set takes KEY=VALUE, got ${JSON.stringify(bad)}`);
  const releaseName = single(flags, 'release-name');
  if (releaseName !== undefined) checkReleaseName(releaseName, '--release-name');
  const { repo, version } = remoteFlagsOf(flags, chart);
  return {
    chart,
    repo,
    version,
    plainHttp: flagIsTrue(flags, 'plain-http'),
    valuesFiles,
    set,
    releaseName,
    includeCRDs: flagIsTrue(flags, 'include-crds', true),
    pruneCRDs: flagIsTrue(flags, 'prune-crds', false),
    skipTests: flagIsTrue(flags, 'skip-tests', true),
  };
}

/** `--repo URL` (an http(s) URL, with a chart name) and `--version RANGE` (a semver range). */
function remoteFlagsOf(
  flags: ParsedFlags,
  chart: string,
): { repo: string | undefined; version: string | undefined } {
  const repo = single(flags, 'repo');
  if (repo !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(repo);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new UsageError(`--repo must be a Helm repository's http(s) URL, got ${JSON.stringify(repo)}`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new UsageError('--repo must not carry credentials (helm repo add --username … keeps them)');
    }
    if (chart.includes('/') || chart.startsWith('oci:'))
      throw new UsageError(`--helm-chart with --repo is a chart's name, got ${JSON.stringify(chart)}`);
  }
  if (flags.has('plain-http') && !chart.startsWith('oci://')) {
    throw new UsageError('--plain-http is for an oci:// chart');
  }
  const version = single(flags, 'version');
  if (version !== undefined && validRange(version) === null) {
    throw new UsageError(
      `--version must be a semver range (1.2.3, ^1.2, >=1.0.0 <2.0.0), got ${JSON.stringify(version)}`,
    );
  }
  return { repo: repo === undefined ? undefined : repo.replace(/\/+$/, ''), version };
}

/** Helm's rule for a release name: a DNS-1123 subdomain of at most 53 characters. */
export function checkReleaseName(name: string, from: string): void {
  if (name.length > MAX_RELEASE_NAME || !DNS1123_SUBDOMAIN.test(name)) {
    throw new UsageError(
      `${from} must be a release name as helm takes it (lowercase letters, digits, '-' and '.', at most ${MAX_RELEASE_NAME} characters), got ${JSON.stringify(name)}`,
    );
  }
}
