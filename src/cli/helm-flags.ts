/**
 * `applyset apply --helm-chart DIR [--values FILE …] [--set KEY=VALUE …] [--release-name NAME]
 * [--include-crds=false] [--prune-crds] [--skip-tests=false]`: a chart on disk as the input, rendered as an ApplySet's
 * spec.helm renders its chart. Read here into what the render needs.
 */
import { DNS1123_SUBDOMAIN } from '../api/spec-fields.js';
import { flagIsTrue, single, UsageError, type ParsedFlags } from './parse-command-line.js';

export const HELM_FLAGS = {
  'helm-chart': { type: 'string' },
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
  /** The chart's directory, as given (relative to the working directory, or absolute). */
  readonly chart: string;
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
  if (chart === '') throw new UsageError('--helm-chart needs a directory, got ""');
  const valuesFiles = flags.get('values') ?? [];
  if (valuesFiles.includes('')) throw new UsageError('--values needs a file name, got ""');
  const set = flags.get('set') ?? [];
  const bad = set.find((value) => !value.includes('=') || value.startsWith('='));
  if (bad !== undefined) throw new UsageError(`--set takes KEY=VALUE, got ${JSON.stringify(bad)}`);
  const releaseName = single(flags, 'release-name');
  if (releaseName !== undefined) checkReleaseName(releaseName, '--release-name');
  return {
    chart,
    valuesFiles,
    set,
    releaseName,
    includeCRDs: flagIsTrue(flags, 'include-crds', true),
    pruneCRDs: flagIsTrue(flags, 'prune-crds', false),
    skipTests: flagIsTrue(flags, 'skip-tests', true),
  };
}

/** Helm's rule for a release name: a DNS-1123 subdomain of at most 53 characters. */
export function checkReleaseName(name: string, from: string): void {
  if (name.length > MAX_RELEASE_NAME || !DNS1123_SUBDOMAIN.test(name)) {
    throw new UsageError(
      `${from} must be a release name as helm takes it (lowercase letters, digits, '-' and '.', at most ${MAX_RELEASE_NAME} characters), got ${JSON.stringify(name)}`,
    );
  }
}
