/**
 * Steps 5 and 7 of a reconcile, which the preview runs too: the spec as the CRD checks it, and the
 * account the set is applied as, which must exist.
 */
import type { ResolvedApplySetSpec, ResolveApplySetSpecResult } from '../api/applyset-types.js';
import type { ApplySetApi } from '../kube/applyset-api.js';
import type { ReconcileOutcome, Step } from '../api/reconcile-outcome.js';
import { serviceAccountNotFound } from './service-account-stall.js';

/** Step 5: the spec as the CRD checks it; an invalid one stalls, naming every field. */
export function checkedSpec(resolved: ResolveApplySetSpecResult): Step<ResolvedApplySetSpec> {
  if (resolved.ok) return { value: resolved.spec };
  const problems = resolved.errors.map((e) => `${e.field} ${e.message}`).join('; ');
  return { done: { kind: 'stalled', reason: 'InvalidSpec', message: `invalid spec: ${problems}` } };
}

/** Step 7: stalled when the ServiceAccount to impersonate does not exist; undefined when it does, or none is. */
export async function missingServiceAccount(
  { api, namespace }: { readonly api: Pick<ApplySetApi, 'serviceAccountExists'>; readonly namespace: string },
  spec: ResolvedApplySetSpec,
  serviceAccount: string | undefined,
  signal: AbortSignal,
): Promise<ReconcileOutcome | undefined> {
  if (serviceAccount === undefined || (await api.serviceAccountExists(namespace, serviceAccount, signal)))
    return undefined;
  const given = spec.serviceAccountName === undefined ? 'default' : 'spec.serviceAccountName';
  return serviceAccountNotFound(namespace, serviceAccount, given);
}
