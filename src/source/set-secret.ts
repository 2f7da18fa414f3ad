/**
 * A Secret an ApplySet names (spec.decryption.secretRef, spec.source.verify.secretRef), read as the
 * account the set is applied as: the controller never reads for a tenant a Secret the tenant's account
 * may not get, and only of the ApplySet's own namespace. Missing or forbidden, the run stalls naming it.
 */
import type { KubeClient } from '../kube/kube-client.js';
import { readSecret, type FoundSecret } from '../kube/applyset-api.js';
import { stalledStep, type Step } from '../api/reconcile-outcome.js';
import { serviceAccountOf } from '../api/applyset-account.js';

export async function readSetSecret(
  { reader, user, namespace }: { reader: KubeClient; user: string | undefined; namespace: string },
  name: string,
  field: string,
  signal: AbortSignal,
): Promise<Step<FoundSecret>> {
  const named = `Secret ${namespace}/${name} (${field})`;
  const secret = await readSecret(reader, namespace, name, signal);
  if (secret.kind === 'missing')
    return stalledStep('SecretNotFound', `${named} does not exist; nothing was applied`);
  if (secret.kind === 'forbidden') {
    const who =
      user === undefined ? 'the controller' : `the ApplySet's ServiceAccount ${serviceAccountOf(user)}`;
    return stalledStep(
      'SecretNotReadable',
      `${who} may not get ${named}; grant it get on that Secret (a Role with resourceNames: [${name}]); nothing was applied`,
    );
  }
  return { value: secret };
}

/**
 * What the data keys ending in `suffix` of a Secret the set names hold (age identities, cosign public
 * keys), read as the account; a stall saying the Secret holds no `lacking` when there is none.
 */
export async function readSetSecretKeys<T>(
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  { name, field }: { readonly name: string; readonly field: string },
  { suffix, read, lacking }: { suffix: string; read: (key: string, value: string) => T[]; lacking: string },
  signal: AbortSignal,
): Promise<Step<T[]>> {
  const secret = await readSetSecret(who, name, field, signal);
  if ('done' in secret) return secret;
  const values = Object.entries(secret.value.data)
    .filter(([key]) => key.endsWith(suffix))
    .flatMap(([key, value]) => read(key, value));
  if (values.length === 0) {
    return stalledStep(
      'SecretNotFound',
      `Secret ${who.namespace}/${name} (${field}) holds no ${lacking}; nothing was applied`,
    );
  }
  return { value: values };
}
