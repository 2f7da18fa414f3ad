/**
 * The account an ApplySet acts as: the one rule of the controller's tenancy (docs/multi-tenancy.md).
 * Its spec.serviceAccountName; else the controller's default account (`--default-service-account`,
 * `applyset-deployer` in the chart); else none, the controller itself (`--apply-as-controller`).
 * Everything done for an ApplySet is done as this account and nothing else: its source credentials,
 * kubeconfig and sops Secrets read, its objects applied, pruned and deleted by the finalizer, its
 * notifications' Secrets read, its objects shown in the web view and its next run previewed.
 */

/**
 * The ServiceAccount, in its own namespace, that an ApplySet without spec.serviceAccountName is applied
 * as unless the controller runs with --apply-as-controller (or names another with
 * --default-service-account).
 */
export const DEFAULT_DEPLOYER_ACCOUNT = 'applyset-deployer';

export interface ApplySetAccount {
  /** The ServiceAccount's name, in the ApplySet's namespace; undefined: the controller itself. */
  readonly serviceAccount: string | undefined;
  /** `system:serviceaccount:<ns>:<name>`, the user impersonated; undefined: the controller itself. */
  readonly user: string | undefined;
}

/** The account of the ApplySet in `namespace` whose spec names `serviceAccountName` (or none). */
export function applySetAccount(
  namespace: string,
  spec: { readonly serviceAccountName?: string | undefined } | undefined,
  defaultServiceAccountName: string | undefined,
): ApplySetAccount {
  const serviceAccount = spec?.serviceAccountName ?? defaultServiceAccountName;
  return { serviceAccount, user: impersonatedUser(namespace, serviceAccount) };
}

/** `system:serviceaccount:<ns>:<name>`: the user a ServiceAccount's token authenticates as. */
function impersonatedUser(namespace: string, serviceAccountName: string | undefined): string | undefined {
  return serviceAccountName === undefined
    ? undefined
    : `system:serviceaccount:${namespace}:${serviceAccountName}`;
}

/** `system:serviceaccount:team-a:deployer` → `team-a/deployer`, as a user names the account. */
export function serviceAccountOf(user: string): string {
  const prefix = 'system:serviceaccount:';
  return user.startsWith(prefix) ? user.slice(prefix.length).replace(':', '/') : user;
}
