import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import type { ApplySetResult } from '../apply/apply-set-contract.js';

/**
 * Stalled: the ServiceAccount an ApplySet is applied as does not exist in its namespace. One line that
 * says what to create; `edit` is the built-in role to start from (everything namespaced but RBAC and
 * quotas), narrowed to what the set holds (docs/multi-tenancy.md).
 */
export function serviceAccountNotFound(
  namespace: string,
  account: string,
  given: 'spec.serviceAccountName' | 'default',
): ReconcileOutcome {
  const which = given === 'default' ? '' : ' (spec.serviceAccountName)';
  const create =
    `kubectl -n ${namespace} create serviceaccount ${account} && ` +
    `kubectl -n ${namespace} create rolebinding ${account} --clusterrole=edit --serviceaccount=${namespace}:${account}`;
  return {
    kind: 'stalled',
    reason: 'ServiceAccountNotFound',
    message:
      `ServiceAccount ${namespace}/${account}${which} does not exist; nothing was applied. ` +
      `Create it and grant it what the set holds: ${create} (see docs/multi-tenancy.md)`,
  };
}

/**
 * The API server's answer when the controller may not impersonate the account: the chart lets it
 * impersonate only the default account and tenancy.serviceAccountNames. Every request of the run is
 * answered so, and the text names the verb and resource whatever the object was.
 */
const CANNOT_IMPERSONATE = /cannot impersonate resource "serviceaccounts"/;

/** Whether `text` (an error or an object's failure) is the API server refusing the impersonation. */
export function isImpersonationRefusal(text: string): boolean {
  return CANNOT_IMPERSONATE.test(text);
}

/** Stalled: the controller is not allowed to act as `account`, so nothing was applied as it. */
export function impersonationForbidden(
  namespace: string,
  account: string,
  revision?: string,
): ReconcileOutcome {
  return {
    kind: 'stalled',
    reason: 'ImpersonationForbidden',
    message:
      `the controller may not impersonate ServiceAccount ${namespace}/${account}; nothing was applied. ` +
      `Name an account the controller may use (chart value tenancy.serviceAccountNames, see docs/multi-tenancy.md)`,
    ...(revision === undefined ? {} : { revision }),
  };
}

/** What the engine run as an account gave: its result, or what it threw. */
export type ImpersonatedRun = { readonly result: ApplySetResult } | { readonly thrown: unknown };

/**
 * ImpersonationForbidden when the API server refused to let the controller act as the account (the
 * chart lets it impersonate only named accounts): every request of the run was refused alike, so the
 * set stalls with that, rather than list each object as failed and retry.
 */
export function refusedImpersonation(
  run: ImpersonatedRun,
  namespace: string,
  serviceAccount: string | undefined,
  revision: string,
): ReconcileOutcome | undefined {
  if (serviceAccount === undefined) return undefined;
  const messages: string[] = [];
  if ('result' in run) {
    for (const outcome of run.result.outcomes)
      if (outcome.action === 'failed') messages.push(outcome.message);
  } else {
    for (let error = run.thrown; error instanceof Error; error = error.cause) messages.push(error.message);
  }
  return messages.some(isImpersonationRefusal)
    ? impersonationForbidden(namespace, serviceAccount, revision)
    : undefined;
}
