import { OCI_DIGEST, OCI_TAG, parseOciUrl } from '../source/oci/oci-reference.js';
import { semverRangeProblem } from '../source/oci/select-semver-tag.js';
import type { ResolvedApplySetSpec, ResolvedOciOptions, ResolvedSourceRef } from './applyset-types.js';
import {
  DNS1123_SUBDOMAIN,
  isNamespaceName,
  isRecord,
  readBoolean,
  readString,
  type SpecFail,
} from './spec-fields.js';
import { resolveSourceConnection } from './source-connection-spec.js';

/*
 * `spec.source`: where the manifests come from. Checked as the CRD checks it, and a little more: a URL
 * carrying credentials is refused so they never reach the status or a log line.
 */

const SHA1 = /^[0-9a-f]{40}$/;

type ResolvedSource = ResolvedApplySetSpec['source'];

/** spec.helm.chart and version as written, read leniently: resolveHelmSpec checks them. */
export interface HelmChartRequest {
  readonly chart: string;
  readonly version: string | undefined;
}

/**
 * `spec.source` with its defaults; undefined url or ref when they are missing or wrong. With
 * spec.helm.chart (`chart`), the URL is the chart's repository: an http(s) one is a `helm` source, an
 * `oci://` one the OCI artifact `<url>/<chart>`, both following the semver range spec.helm.version.
 */
export function resolveSourceSpec(
  source: unknown,
  chart: HelmChartRequest | undefined,
  fail: SpecFail,
): Omit<ResolvedSource, 'url' | 'ref'> & { url: string | undefined; ref: ResolvedSourceRef | undefined } {
  if (!isRecord(source)) {
    fail('spec.source', 'is required');
    return {
      kind: 'git',
      url: undefined,
      ref: undefined,
      oci: undefined,
      path: '',
      ...NO_SECRET,
      ignore: [],
    };
  }
  // In the order of the fields, so the problems are listed in that order.
  const written = resolveUrl(source, fail);
  const oci = written?.startsWith('oci://') === true;
  if (chart !== undefined) return resolveChartSource(source, chart, written, fail);
  const kind = oci ? 'oci' : 'git';
  const ref = oci ? resolveOciRef(source['ref'], fail) : resolveRef(source['ref'], fail);
  const path = resolvePath(source, fail);
  const ignore = resolveIgnore(source, fail);
  const secret = resolveSecretRef(source['secretRef'], fail);
  const ociOptions = resolveOciOptions(source, kind, fail);
  const connection = resolveSourceConnection(source, fail);
  return { kind, url: written, ref, oci: ociOptions, path, ...secret, ignore, ...connection };
}

/**
 * A chart of a repository: its version is spec.helm.version (a semver range; `*`, the highest stable
 * version, by default, as helm picks one), so spec.source.ref is refused, and the tree is the chart,
 * so spec.source.path must be empty.
 */
function resolveChartSource(
  source: Readonly<Record<string, unknown>>,
  chart: HelmChartRequest,
  written: string | undefined,
  fail: SpecFail,
): ReturnType<typeof resolveSourceSpec> {
  const kind = written?.startsWith('oci://') === true ? 'oci' : 'helm';
  if (written !== undefined && kind === 'helm' && !/^https?:\/\//i.test(written)) {
    fail('spec.source.url', 'a chart repository is an http(s) or oci:// URL, not ssh');
  }
  if (source['ref'] !== undefined) {
    fail('spec.source.ref', "must not be set with spec.helm.chart: the chart's version is spec.helm.version");
  }
  const path = resolvePath(source, fail);
  if (path !== '') fail('spec.source.path', 'must be empty with spec.helm.chart: the tree read is the chart');
  const url = written === undefined ? undefined : kind === 'oci' ? `${written}/${chart.chart}` : written;
  const ignore = resolveIgnore(source, fail);
  const secret = resolveSecretRef(source['secretRef'], fail);
  const oci = resolveOciOptions(source, kind, fail);
  const ref = { type: 'semver', range: chart.version ?? '*' } as const;
  return { kind, url, ref, oci, path, ...secret, ignore, ...resolveSourceConnection(source, fail) };
}

/**
 * `./apps/`, `apps//web` and `.` are the same directories as `apps`, `apps/web` and the root; absolute
 * paths and `..` segments could leave the checkout, so they have no normal form. spec.source.path and
 * `applyset apply --oci … --path` are read with it.
 */
export function normalizeSourcePath(path: string): string | undefined {
  if (path.startsWith('/')) return undefined;
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return undefined;
  return segments.join('/');
}

const URL_FORMS = 'must be an http, https or ssh URL, or git@host:path';
/** git's scp-like form, `user@host:path`, as src/git/parse-repository-url.ts reads it (a user is required). */
const SCP_LIKE_URL = /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):[^\s]+$/;

const NO_SECRET = { secretName: undefined, secretNamespace: undefined };

function resolveUrl(source: Readonly<Record<string, unknown>>, fail: SpecFail): string | undefined {
  const url = readString(source, 'url', 'spec.source.url', fail, { required: true });
  if (url === undefined) return undefined;
  if (url.startsWith('oci://')) {
    const parsed = parseOciUrl(url);
    return 'problem' in parsed ? fail('spec.source.url', parsed.problem) : url;
  }
  const problem = sourceUrlProblem(url);
  return problem === undefined ? url : fail('spec.source.url', problem);
}

/** An `oci://` source's ref: exactly one of a tag, a semver range of tags and a manifest digest. */
function resolveOciRef(ref: unknown, fail: SpecFail): ResolvedSourceRef | undefined {
  if (!isRecord(ref)) return fail('spec.source.ref', 'is required');
  const given = (['branch', 'tag', 'commit', 'semver', 'digest'] as const).filter(
    (key) => ref[key] !== undefined,
  );
  const [key] = given;
  if (given.length !== 1 || (key !== 'tag' && key !== 'semver' && key !== 'digest')) {
    return fail('spec.source.ref', 'an oci:// source takes exactly one of tag, semver or digest');
  }
  const value = readString(ref, key, `spec.source.ref.${key}`, fail, { required: true });
  if (value === undefined) return undefined;
  switch (key) {
    case 'tag':
      return OCI_TAG.test(value)
        ? { type: 'tag', name: value }
        : fail(
            'spec.source.ref.tag',
            'must be an OCI tag ([A-Za-z0-9_][A-Za-z0-9._-], at most 128 characters)',
          );
    case 'semver': {
      const problem = semverRangeProblem(value);
      return problem === undefined
        ? { type: 'semver', range: value }
        : fail('spec.source.ref.semver', problem);
    }
    case 'digest':
      return OCI_DIGEST.test(value)
        ? { type: 'digest', digest: value }
        : fail('spec.source.ref.digest', 'must be sha256: and 64 lowercase hex digits');
  }
}

/** spec.source.insecure and verify: an `oci://` source's alone. */
function resolveOciOptions(
  source: Readonly<Record<string, unknown>>,
  kind: ResolvedSource['kind'],
  fail: SpecFail,
): ResolvedOciOptions | undefined {
  const insecure = readBoolean(source, 'insecure', fail);
  const verify = source['verify'];
  if (kind !== 'oci') {
    if (insecure) fail('spec.source.insecure', 'applies to an oci:// source only');
    if (verify !== undefined) fail('spec.source.verify', 'applies to an oci:// source only');
    return undefined;
  }
  return { insecure, verifySecretName: resolveVerify(verify, fail) };
}

/** `verify: {provider: cosign, secretRef: {name}}`; keyless cosign needs the internet and is refused. */
function resolveVerify(verify: unknown, fail: SpecFail): string | undefined {
  if (verify === undefined) return undefined;
  if (!isRecord(verify)) return fail('spec.source.verify', 'must be an object');
  const provider = readString(verify, 'provider', 'spec.source.verify.provider', fail, { required: true });
  if (provider !== undefined && provider !== 'cosign')
    return fail('spec.source.verify.provider', 'must be cosign');
  const secretRef = verify['secretRef'];
  if (!isRecord(secretRef)) {
    return fail(
      'spec.source.verify.secretRef',
      'is required: keyless verification (Fulcio, Rekor) needs the public internet and is not supported; name a Secret of cosign public keys (*.pub)',
    );
  }
  const name = readString(secretRef, 'name', 'spec.source.verify.secretRef.name', fail, { required: true });
  if (name !== undefined && !DNS1123_SUBDOMAIN.test(name)) {
    return fail('spec.source.verify.secretRef.name', 'must be a DNS-1123 subdomain');
  }
  return name;
}

/**
 * What is wrong with a source URL, read the way the Git source will read it (WHATWG URL, as Node's
 * `new URL`): a pattern misses forms the parser still finds credentials in (`https:///u:p@host`,
 * backslashes, a user without a password), and those would be sent, or end up in the status.
 * @internal A pure step the tests exercise alone.
 */
export function sourceUrlProblem(url: string): string | undefined {
  if (SCP_LIKE_URL.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return URL_FORMS;
  }
  if (parsed.protocol === 'ssh:' && !/\s/.test(url)) {
    // An ssh URL names its account (`git@`); a password there is a credential.
    return parsed.password === '' ? undefined : 'credentials must not be part of the URL; use secretRef';
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || /\s/.test(url)) {
    return URL_FORMS;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return 'credentials must not be part of the URL; use secretRef';
  }
  return undefined;
}

function resolveRef(ref: unknown, fail: SpecFail): ResolvedSourceRef | undefined {
  if (!isRecord(ref)) return fail('spec.source.ref', 'is required');
  if (ref['semver'] !== undefined) {
    return fail(
      'spec.source.ref.semver',
      'applies to an oci:// source only: a Git source follows exactly one of branch, tag or commit',
    );
  }
  const given = (['branch', 'tag', 'commit'] as const).filter((key) => ref[key] !== undefined);
  if (given.length !== 1) return fail('spec.source.ref', 'exactly one of branch, tag or commit must be set');
  const [key] = given;
  const value = readString(ref, key ?? 'branch', `spec.source.ref.${key}`, fail, { required: true });
  if (value === undefined) return undefined;
  if (value === '') return fail(`spec.source.ref.${key}`, 'must not be empty');
  switch (key) {
    case 'branch':
      return { type: 'branch', name: value };
    case 'tag':
      return { type: 'tag', name: value };
    case 'commit':
      return SHA1.test(value)
        ? { type: 'commit', sha: value }
        : fail('spec.source.ref.commit', 'must be a full 40-character lowercase SHA-1');
    default:
      return undefined;
  }
}

function resolvePath(source: Readonly<Record<string, unknown>>, fail: SpecFail): string {
  const rawPath = readString(source, 'path', 'spec.source.path', fail);
  if (rawPath === undefined) return '';
  const normalized = normalizeSourcePath(rawPath);
  if (normalized !== undefined) return normalized;
  fail('spec.source.path', pathProblem(rawPath));
  return '';
}

function pathProblem(path: string): string {
  return path.startsWith('/') ? 'must be relative to the repository root' : "must not contain '..' segments";
}

function resolveIgnore(source: Readonly<Record<string, unknown>>, fail: SpecFail): string[] {
  const ignoreText = readString(source, 'ignore', 'spec.source.ignore', fail);
  return ignoreText === undefined ? [] : ignoreText.split(/\r?\n/).filter((line) => line.trim() !== '');
}

function resolveSecretRef(
  secretRef: unknown,
  fail: SpecFail,
): Pick<ResolvedSource, 'secretName' | 'secretNamespace'> {
  if (secretRef === undefined) return NO_SECRET;
  if (!isRecord(secretRef)) {
    fail('spec.source.secretRef', 'must be an object');
    return NO_SECRET;
  }
  let secretName = readString(secretRef, 'name', 'spec.source.secretRef.name', fail, { required: true });
  if (secretName !== undefined && !DNS1123_SUBDOMAIN.test(secretName))
    secretName = fail('spec.source.secretRef.name', 'must be a DNS-1123 subdomain');
  let secretNamespace = readString(secretRef, 'namespace', 'spec.source.secretRef.namespace', fail);
  if (secretNamespace !== undefined && !isNamespaceName(secretNamespace))
    secretNamespace = fail('spec.source.secretRef.namespace', 'must be a namespace name (a DNS-1123 label)');
  return { secretName, secretNamespace };
}
