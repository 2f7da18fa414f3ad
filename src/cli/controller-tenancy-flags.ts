import { DEFAULT_DEPLOYER_ACCOUNT } from '../api/applyset-account.js';
import type { ControllerConfig } from '../controller/runtime/controller-config.js';

/** A flag, or a combination of flags, that cannot mean anything: the controller does not start. */
export class TenancyFlagError extends Error {
  override readonly name = 'TenancyFlagError';
}

/** The tenancy flags as parseArgs read them. */
export interface TenancyFlagValues {
  readonly 'apply-as-controller': boolean;
  readonly 'default-service-account'?: string | undefined;
  readonly 'require-secret-source-hosts': boolean;
  readonly 'no-cross-namespace-refs': boolean;
  readonly 'allow-cross-namespace-refs': boolean;
  readonly 'allow-secret-refs-from': string;
}

export type TenancyConfig = Pick<
  ControllerConfig,
  'defaultServiceAccountName' | 'requireSecretSourceHosts' | 'noCrossNamespaceRefs' | 'allowSecretRefsFrom'
>;

/**
 * Who an ApplySet is applied as, where Git credentials may go, and which namespaces a reference may
 * name. The default is the multi-tenant lockdown (issue #23): an ApplySet without
 * spec.serviceAccountName is applied as `applyset-deployer` of its own namespace, a credentials Secret
 * must name its hosts, and nothing of another namespace is referenced. `--apply-as-controller` is the
 * one opt-out, for a cluster with a single team: the controller's identity for those ApplySets, and
 * credentials Secrets without hosts accepted (`--require-secret-source-hosts` keeps that requirement).
 */
export function tenancyFlags(values: TenancyFlagValues): TenancyConfig {
  const asController = values['apply-as-controller'];
  const account = values['default-service-account'];
  if (asController && account !== undefined) {
    throw new TenancyFlagError(
      '--apply-as-controller applies ApplySets without spec.serviceAccountName as the controller, ' +
        '--default-service-account as a ServiceAccount of their namespace: give one of them',
    );
  }
  if (account !== undefined && !SERVICE_ACCOUNT_NAME.test(account)) {
    throw new TenancyFlagError(
      `--default-service-account must be a ServiceAccount name (a DNS-1123 subdomain), got "${account}"`,
    );
  }
  return {
    ...(asController ? {} : { defaultServiceAccountName: account ?? DEFAULT_DEPLOYER_ACCOUNT }),
    requireSecretSourceHosts: !asController || values['require-secret-source-hosts'],
    ...referenceFlags(values),
  };
}

/** Cross-namespace references: refused unless --allow-cross-namespace-refs, then per its list. */
function referenceFlags(
  values: TenancyFlagValues,
): Pick<TenancyConfig, 'noCrossNamespaceRefs' | 'allowSecretRefsFrom'> {
  const allowSecretRefsFrom = namespaceList('allow-secret-refs-from', values['allow-secret-refs-from']);
  const allowed = values['allow-cross-namespace-refs'];
  if (allowed && values['no-cross-namespace-refs']) {
    throw new TenancyFlagError(
      '--no-cross-namespace-refs (the default) contradicts --allow-cross-namespace-refs: give one of them',
    );
  }
  if (!allowed && allowSecretRefsFrom.length > 0) {
    throw new TenancyFlagError(
      '--allow-secret-refs-from names namespaces to read Secrets from, but references to another ' +
        'namespace are refused by default: add --allow-cross-namespace-refs',
    );
  }
  return { noCrossNamespaceRefs: !allowed, allowSecretRefsFrom };
}

/** A bare name: `ns:name` or `system:serviceaccount:…` would escape the ApplySet's own namespace. */
export const SERVICE_ACCOUNT_NAME =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A comma-separated list of namespace names; empty text is an empty list. */
function namespaceList(flag: string, text: string): string[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) {
      throw new TenancyFlagError(`--${flag}: "${name}" is not a namespace name`);
    }
  }
  return names;
}
