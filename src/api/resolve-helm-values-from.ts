import type { ResolvedValuesReference } from './helm-values-reference.js';
import { DNS1123_SUBDOMAIN, isRecord, readString, type SpecFail } from './spec-fields.js';

/** @internal The most valuesFrom entries one chart is rendered with: the CRD test holds its maxItems to it. */
export const MAX_HELM_VALUES_FROM = 32;
/** Flux's default key of a values ConfigMap or Secret. */
const DEFAULT_VALUES_KEY = 'values.yaml';
/** A ConfigMap's or Secret's data key, as the API server accepts one. */
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
/** One key of a targetPath: letters, digits, `_` and `-` (no list index, no escaped dot). */
const PATH_KEY = /^[a-zA-Z0-9_-]+$/;
/** The longest name, key or path the API server (and the CRD) accepts. */
const MAX_NAME_LENGTH = 253;

/**
 * `spec.helm.valuesFrom` (Flux's HelmRelease field): ConfigMaps and Secrets of the ApplySet's
 * namespace whose values key is given to helm, in order, after the values files. Each entry's problems
 * are named by its index.
 */
export function resolveValuesFrom(raw: unknown, fail: SpecFail): ResolvedValuesReference[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    fail('spec.helm.valuesFrom', 'must be a list of ConfigMap and Secret references');
    return [];
  }
  if (raw.length > MAX_HELM_VALUES_FROM)
    fail('spec.helm.valuesFrom', `must hold at most ${MAX_HELM_VALUES_FROM} references`);
  return raw.flatMap((entry: unknown, index) => {
    const resolved = resolveReference(entry, `spec.helm.valuesFrom[${index}]`, fail);
    return resolved === undefined ? [] : [resolved];
  });
}

function resolveReference(
  entry: unknown,
  field: string,
  fail: SpecFail,
): ResolvedValuesReference | undefined {
  if (!isRecord(entry)) return fail(field, 'must be an object (kind, name, valuesKey, targetPath, optional)');
  const kind = entry['kind'];
  if (kind !== 'ConfigMap' && kind !== 'Secret') fail(`${field}.kind`, 'must be ConfigMap or Secret');
  const name = readString(entry, 'name', `${field}.name`, fail, { required: true });
  if (name !== undefined && !(DNS1123_SUBDOMAIN.test(name) && name.length <= MAX_NAME_LENGTH))
    fail(`${field}.name`, 'must be a DNS-1123 subdomain');
  const valuesKey = readString(entry, 'valuesKey', `${field}.valuesKey`, fail) ?? DEFAULT_VALUES_KEY;
  if (!(DATA_KEY.test(valuesKey) && valuesKey.length <= MAX_NAME_LENGTH))
    fail(`${field}.valuesKey`, 'must be a data key (letters, digits, "-", "_" and ".")');
  const targetPath = resolveTargetPath(entry, `${field}.targetPath`, fail);
  const optional = entry['optional'] ?? false;
  if (typeof optional !== 'boolean') fail(`${field}.optional`, 'must be true or false');
  if ((kind !== 'ConfigMap' && kind !== 'Secret') || name === undefined || typeof optional !== 'boolean')
    return undefined;
  return { kind, name, valuesKey, targetPath, optional };
}

/** `a.b.c` as its keys; undefined when not set. */
function resolveTargetPath(
  entry: Readonly<Record<string, unknown>>,
  field: string,
  fail: SpecFail,
): string[] | undefined {
  const text = readString(entry, 'targetPath', field, fail);
  if (text === undefined) return undefined;
  const keys = text.split('.');
  if (text.length > MAX_NAME_LENGTH || !keys.every((key) => PATH_KEY.test(key)))
    return fail(field, 'must be a dotted path of keys (letters, digits, "_" and "-"), such as image.tag');
  return keys;
}
