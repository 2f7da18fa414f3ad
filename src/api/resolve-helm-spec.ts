import path from 'node:path';
import { semverRangeProblem } from '../source/oci/select-semver-tag.js';
import type { ResolvedHelmSpec } from './applyset-types.js';
import { resolveValuesFrom } from './resolve-helm-values-from.js';
import type { HelmChartRequest } from './resolve-source-spec.js';
import { DNS1123_SUBDOMAIN, isNamespaceName, isRecord, readString, type SpecFail } from './spec-fields.js';

/** Helm's own bound on a release name (it goes into names of 63 characters with a suffix). */
const MAX_RELEASE_NAME_LENGTH = 53;
/** @internal The most values files one chart is rendered with: the CRD test holds its maxItems to it. */
export const MAX_HELM_VALUES_FILES = 32;

/**
 * A chart's name: lowercase letters and digits, words joined by `-`, `_` or `.`, as Helm's own naming
 * advice has it and as an OCI repository's path component must be (it becomes `<url>/<chart>`).
 */
const CHART_NAME = /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/;
const MAX_CHART_NAME_LENGTH = 128;

/** Whose spec it is: the defaults of the release name and namespace. */
export interface ApplySetIdentity {
  readonly name: string;
  readonly namespace: string;
}

/**
 * `spec.helm` with its defaults (docs/helm.md): the release named after the ApplySet, rendered for
 * spec.targetNamespace or the ApplySet's namespace, CRDs included and test hooks left out. Values
 * files are relative to the chart's directory (spec.source.path, as Argo CD's valueFiles are) and may
 * name a file elsewhere in the source's tree (`../values/prod.yaml`), never outside it.
 */
export function resolveHelmSpec(
  raw: unknown,
  context: {
    readonly sourcePath: string | undefined;
    readonly targetNamespace: string | undefined;
    readonly owner: ApplySetIdentity | undefined;
  },
  fail: SpecFail,
): ResolvedHelmSpec | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) return fail('spec.helm', 'must be an object');
  const chart = resolveChart(raw, fail);
  const releaseName = resolveReleaseName(raw, context.owner, fail);
  const namespace = resolveNamespace(raw, context, fail);
  const values = raw['values'] ?? {};
  if (!isRecord(values)) fail('spec.helm.values', 'must be an object (the chart values, as in values.yaml)');
  const valuesFiles = resolveValuesFiles(raw['valuesFiles'], context.sourcePath, fail);
  const valuesFrom = resolveValuesFrom(raw['valuesFrom'], fail);
  const includeCRDs = readSwitch(raw, 'includeCRDs', true, fail);
  const pruneCRDs = readSwitch(raw, 'pruneCRDs', false, fail);
  const skipTests = readSwitch(raw, 'skipTests', true, fail);
  if (releaseName === undefined || namespace === undefined || !isRecord(values)) return undefined;
  return {
    chart,
    releaseName,
    namespace,
    values,
    valuesFiles,
    valuesFrom,
    includeCRDs,
    pruneCRDs,
    skipTests,
  };
}

/** spec.helm.chart and version as written, for spec.source (resolveSourceSpec); checked by resolveHelmSpec. */
export function helmChartRequest(raw: unknown): HelmChartRequest | undefined {
  if (!isRecord(raw) || typeof raw['chart'] !== 'string') return undefined;
  const version = raw['version'];
  return { chart: raw['chart'], version: typeof version === 'string' ? version : undefined };
}

function resolveChart(raw: Readonly<Record<string, unknown>>, fail: SpecFail): string | undefined {
  const chart = readString(raw, 'chart', 'spec.helm.chart', fail);
  const version = readString(raw, 'version', 'spec.helm.version', fail);
  if (version !== undefined) {
    const problem =
      chart === undefined
        ? 'applies only with spec.helm.chart (a chart of a repository)'
        : semverRangeProblem(version);
    if (problem !== undefined) fail('spec.helm.version', problem);
  }
  if (chart === undefined) return undefined;
  if (chart.length > MAX_CHART_NAME_LENGTH || !CHART_NAME.test(chart)) {
    return fail(
      'spec.helm.chart',
      `must be a chart name of at most ${MAX_CHART_NAME_LENGTH} characters: lowercase letters and digits, words joined by -, _ or .`,
    );
  }
  return chart;
}

function resolveReleaseName(
  raw: Readonly<Record<string, unknown>>,
  owner: ApplySetIdentity | undefined,
  fail: SpecFail,
): string | undefined {
  const given = readString(raw, 'releaseName', 'spec.helm.releaseName', fail);
  if (given === undefined && raw['releaseName'] !== undefined) return undefined;
  const name = given ?? owner?.name;
  const field = 'spec.helm.releaseName';
  if (name === undefined) return fail(field, 'is required (the ApplySet is not named here)');
  const why = given === undefined ? ` (the default, the ApplySet's name ${JSON.stringify(name)})` : '';
  if (!DNS1123_SUBDOMAIN.test(name)) return fail(field, `must be a DNS-1123 subdomain${why}`);
  if (name.length > MAX_RELEASE_NAME_LENGTH)
    return fail(
      field,
      `must be at most ${MAX_RELEASE_NAME_LENGTH} characters, as Helm requires${why}; name the release`,
    );
  return name;
}

function resolveNamespace(
  raw: Readonly<Record<string, unknown>>,
  { targetNamespace, owner }: { targetNamespace: string | undefined; owner: ApplySetIdentity | undefined },
  fail: SpecFail,
): string | undefined {
  const given = readString(raw, 'namespace', 'spec.helm.namespace', fail);
  if (given === undefined && raw['namespace'] !== undefined) return undefined;
  if (given !== undefined && !isNamespaceName(given))
    return fail('spec.helm.namespace', 'must be a DNS-1123 label');
  const namespace = given ?? targetNamespace ?? owner?.namespace;
  if (namespace === undefined)
    return fail('spec.helm.namespace', 'is required (the ApplySet is not named here)');
  return namespace;
}

/** Each file relative to the chart's directory, kept as its path from the source's root. */
function resolveValuesFiles(raw: unknown, sourcePath: string | undefined, fail: SpecFail): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    fail('spec.helm.valuesFiles', 'must be a list of paths');
    return [];
  }
  if (raw.length > MAX_HELM_VALUES_FILES)
    fail('spec.helm.valuesFiles', `must hold at most ${MAX_HELM_VALUES_FILES} paths`);
  const files: string[] = [];
  raw.forEach((entry: unknown, index) => {
    const field = `spec.helm.valuesFiles[${index}]`;
    if (typeof entry !== 'string' || entry === '') return fail(field, 'must be a path');
    if (entry.startsWith('/'))
      return fail(field, 'must be relative to the chart directory (spec.source.path)');
    const fromRoot = path.posix.normalize(path.posix.join(sourcePath ?? '', entry));
    if (fromRoot === '..' || fromRoot.startsWith('../') || fromRoot === '.')
      return fail(field, `must name a file inside the source's tree (from its root: ${fromRoot})`);
    files.push(fromRoot);
    return undefined;
  });
  return files;
}

/** includeCRDs, pruneCRDs and skipTests: their default unless set. */
function readSwitch(
  raw: Readonly<Record<string, unknown>>,
  key: string,
  byDefault: boolean,
  fail: SpecFail,
): boolean {
  const value = raw[key];
  if (value === undefined) return byDefault;
  if (typeof value !== 'boolean') {
    fail(`spec.helm.${key}`, 'must be true or false');
    return byDefault;
  }
  return value;
}
