import type { RemoteKubeConfigRef } from './applyset-types.js';
import { DNS1123_SUBDOMAIN, isRecord, readString, type SpecFail } from './spec-fields.js';

/** A Secret's data key, as the API server allows it. */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/**
 * `spec.kubeConfig.secretRef` (Flux's shape): the Secret of the ApplySet's own namespace holding the
 * kubeconfig of the cluster to apply to, and its key. There is no namespace field: a kubeconfig grants
 * whatever its credentials may do, so it is only ever read beside the ApplySet, as its account.
 */
export function resolveKubeConfigRef(raw: unknown, fail: SpecFail): RemoteKubeConfigRef | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) return fail('spec.kubeConfig', 'must be an object');
  const ref = raw['secretRef'];
  if (!isRecord(ref))
    return fail('spec.kubeConfig.secretRef', ref === undefined ? 'is required' : 'must be an object');
  let secretName = readString(ref, 'name', 'spec.kubeConfig.secretRef.name', fail, { required: true });
  if (secretName !== undefined && !(DNS1123_SUBDOMAIN.test(secretName) && secretName.length <= 253))
    secretName = fail('spec.kubeConfig.secretRef.name', 'must be a DNS-1123 subdomain');
  let key = readString(ref, 'key', 'spec.kubeConfig.secretRef.key', fail);
  if (key !== undefined && !(SECRET_KEY.test(key) && key.length <= 253))
    key = fail('spec.kubeConfig.secretRef.key', 'must be a Secret key (letters, digits, -, _ and .)');
  return secretName === undefined ? undefined : { secretName, key };
}
