/**
 * `spec.source.certSecretRef` and `spec.source.proxySecretRef` (Flux's names): how the controller
 * connects to the source, apart from its credentials (docs/tls-and-proxies.md). Both name a Secret of the
 * ApplySet's own namespace, read as the ApplySet's account.
 */
import { DNS1123_SUBDOMAIN, isRecord, readString, type SpecFail } from './spec-fields.js';

export interface SourceConnectionSpec {
  /** `ca.crt`, and `tls.crt` with `tls.key` (mTLS), for a source whose secretRef does not hold them. */
  readonly certSecretRef?: { readonly name: string };
  /** `address` (`http://host:port`) of a proxy, with `username` and `password` when it needs them. */
  readonly proxySecretRef?: { readonly name: string };
}

export interface ResolvedSourceConnection {
  readonly certSecretName?: string;
  readonly proxySecretName?: string;
}

export function resolveSourceConnection(
  source: Readonly<Record<string, unknown>>,
  fail: SpecFail,
): ResolvedSourceConnection {
  const certSecretName = secretNameOf(source, 'certSecretRef', fail);
  const proxySecretName = secretNameOf(source, 'proxySecretRef', fail);
  return {
    ...(certSecretName === undefined ? {} : { certSecretName }),
    ...(proxySecretName === undefined ? {} : { proxySecretName }),
  };
}

function secretNameOf(
  source: Readonly<Record<string, unknown>>,
  key: 'certSecretRef' | 'proxySecretRef',
  fail: SpecFail,
): string | undefined {
  const ref = source[key];
  if (ref === undefined) return undefined;
  if (!isRecord(ref)) return fail(`spec.source.${key}`, 'must be an object');
  const name = readString(ref, 'name', `spec.source.${key}.name`, fail, { required: true });
  if (name !== undefined && !DNS1123_SUBDOMAIN.test(name)) {
    return fail(`spec.source.${key}.name`, 'must be a DNS-1123 subdomain');
  }
  return name;
}
