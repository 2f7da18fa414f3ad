/**
 * spec.helm.valuesFrom read (step 8, before the chart is rendered): each ConfigMap or Secret of the
 * ApplySet's namespace, read as the account the set is applied as, as spec.source.secretRef and
 * spec.decryption's Secret are: the controller never reads for a tenant an object the tenant's account
 * may not get, and never of another namespace. A value is never logged; a stall names the entry, the
 * object and the key, never what it holds.
 */
import type { ResolvedValuesReference } from '../api/helm-values-reference.js';
import { serviceAccountOf } from '../api/applyset-account.js';
import { stalledStep, type Step } from '../api/reconcile-outcome.js';
import type { ValuesFromDocument } from '../helm/values-from-document.js';
import { readConfigMap, readSecret } from '../kube/applyset-api.js';
import type { KubeClient } from '../kube/kube-client.js';

/** The values of every entry, in order; an optional one that is missing (or lacks its key) left out. */
export async function readHelmValuesFrom(
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  references: readonly ResolvedValuesReference[],
  signal: AbortSignal,
): Promise<Step<ValuesFromDocument[]>> {
  const documents: ValuesFromDocument[] = [];
  for (const [index, reference] of references.entries()) {
    const read = await readReference(who, reference, `spec.helm.valuesFrom[${index}]`, signal);
    if ('done' in read) return read;
    if (read.value !== undefined) documents.push(read.value);
  }
  return { value: documents };
}

/** The condition reasons of a valuesFrom object that cannot be read, by its kind. */
const REASONS = {
  ConfigMap: { unreadable: 'ConfigMapNotReadable', missing: 'ConfigMapNotFound' },
  Secret: { unreadable: 'SecretNotReadable', missing: 'SecretNotFound' },
} as const;

async function readReference(
  { reader, user, namespace }: { reader: KubeClient; user: string | undefined; namespace: string },
  { kind, name, valuesKey, targetPath, optional }: ResolvedValuesReference,
  field: string,
  signal: AbortSignal,
): Promise<Step<ValuesFromDocument | undefined>> {
  const read =
    kind === 'Secret'
      ? await readSecret(reader, namespace, name, signal)
      : await readConfigMap(reader, namespace, name, signal);
  const named = `${kind} ${namespace}/${name} (${field})`;
  if (read.kind === 'forbidden') {
    const who =
      user === undefined ? 'the controller' : `the ApplySet's ServiceAccount ${serviceAccountOf(user)}`;
    return stalledStep(
      REASONS[kind].unreadable,
      `${who} may not get ${named}; grant it get on that ${kind} (a Role with resourceNames: [${name}]); nothing was applied`,
    );
  }
  if (read.kind === 'missing') {
    if (optional) return { value: undefined };
    return stalledStep(
      REASONS[kind].missing,
      `${named} does not exist; create it, or mark the entry optional; nothing was applied`,
    );
  }
  const text = read.data[valuesKey];
  if (text === undefined) {
    if (optional) return { value: undefined };
    return stalledStep(
      REASONS[kind].missing,
      `${named} has no key ${valuesKey} (valuesKey); nothing was applied`,
    );
  }
  return {
    value: {
      field,
      from: `${kind} ${namespace}/${name}, key ${valuesKey}`,
      text,
      targetPath,
      secret: kind === 'Secret',
    },
  };
}
