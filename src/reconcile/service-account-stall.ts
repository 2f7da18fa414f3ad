import { classifyFailure } from '../errors/classify-failure.js';
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
 * Stalled: the controller is not allowed to act as `account`, so nothing was applied as it.
 * @internal A pure step the tests exercise alone.
 */
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
  const errors =
    'result' in run
      ? run.result.outcomes.flatMap((outcome) => (outcome.action === 'failed' ? [outcome.cause] : []))
      : [run.thrown];
  return errors.some(refusesImpersonation)
    ? impersonationForbidden(namespace, serviceAccount, revision)
    : undefined;
}

/** Whether `error`, or an error it wraps, is the API server refusing the impersonation. */
function refusesImpersonation(error: unknown): boolean {
  if (classifyFailure(error).reason === 'ImpersonationForbidden') return true;
  return error instanceof Error && error.cause !== undefined && refusesImpersonation(error.cause);
}
