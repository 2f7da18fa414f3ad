/**
 * The kubeconfig of a remote cluster (spec.kubeConfig.secretRef) as the controller accepts it. A
 * tenant writes it, the controller runs it: so only what the Secret itself holds is used. A plugin
 * (exec, auth-provider) would run a program of the tenant's choosing in the controller's container,
 * and a file reference would read one of the controller's files (its own token) and send it as a
 * credential; both are refused unless the operator allows them. The server's address is checked as a
 * Git source URL is: never a cloud metadata or link-local address, nor loopback or the controller's
 * own addresses unless `--allowed-remote-cluster-hosts` names the host.
 */
import { IntentError } from '../errors/intent-error.js';
import { messageOf } from '../errors/message-of.js';
import type { ProxyEnvironment } from '../net/proxy-environment.js';
import type { SourceHostList } from '../net/host-list.js';
import { destinationUrlRefusal } from '../net/destination-url-refusal.js';
import {
  currentClusterOf,
  currentContextOf,
  currentUserOf,
  type KubeConfig,
  type KubeConfigCluster,
  type KubeConfigUser,
} from '../kube/kubeconfig-model.js';
import { parseKubeConfigText } from '../kube/kubeconfig-parse.js';

/** What the operator lets a remote kubeconfig do (controller flags, chart values). */
export interface RemoteKubeConfigPolicy {
  /** `--allow-remote-kubeconfig-exec`: exec and auth-provider plugins run. */
  readonly allowExec: boolean;
  /** `--allow-remote-kubeconfig-files`: certificate-authority, client-certificate, client-key, tokenFile. */
  readonly allowFiles: boolean;
  /** `--allowed-remote-cluster-hosts`: the only servers allowed (empty: any); re-admits loopback. */
  readonly allowedHosts: SourceHostList;
  /** The operator's HTTPS_PROXY, HTTP_PROXY and NO_PROXY. */
  readonly proxies?: ProxyEnvironment;
}

/** A remote kubeconfig the controller will not use: a human must change the Secret or the flags. */
export class RemoteKubeConfigRefusedError extends IntentError {
  override readonly name = 'RemoteKubeConfigRefusedError';
  readonly code = 'REMOTE_KUBECONFIG_REFUSED';
  readonly intent = 'stalled';
  readonly reason = 'KubeConfigRefused';
}

/**
 * The kubeconfig `text` read from `from` (`Secret team-a/remote, key value`), checked against the
 * policy; every problem of its current context is named at once. Throws RemoteKubeConfigRefusedError.
 */
export function parseRemoteKubeConfig(
  text: string,
  from: string,
  policy: RemoteKubeConfigPolicy,
): KubeConfig {
  let parsed: KubeConfig;
  try {
    // Relative paths resolve against '/': they are refused anyway unless files are allowed.
    parsed = parseKubeConfigText(text, '/kubeconfig');
  } catch (error) {
    throw new RemoteKubeConfigRefusedError(`${from} is not a kubeconfig: ${messageOf(error)}`, {
      cause: error,
    });
  }
  const config = withSource(parsed, from);
  const problems = remoteKubeConfigProblems(config, policy);
  if (problems.length > 0) {
    throw new RemoteKubeConfigRefusedError(`the kubeconfig of ${from} is refused: ${problems.join('; ')}`);
  }
  return config;
}

/** Every reason the policy refuses the kubeconfig's current context; none when it may be used. */
function remoteKubeConfigProblems(config: KubeConfig, policy: RemoteKubeConfigPolicy): string[] {
  if (config.currentContext === '') return ['it sets no current-context'];
  if (currentContextOf(config) === undefined)
    return [`current-context "${config.currentContext}" is not defined`];
  const cluster = currentClusterOf(config);
  if (cluster === undefined) return [`context "${config.currentContext}" names no cluster it defines`];
  const user: KubeConfigUser = currentUserOf(config) ?? { name: '' };
  return [
    ...serverProblems(cluster, policy),
    ...unsupportedProblems(cluster, user),
    ...fileProblems(cluster, user, policy),
    ...pluginProblems(user, policy),
  ];
}

function serverProblems(cluster: KubeConfigCluster, policy: RemoteKubeConfigPolicy): string[] {
  if (cluster.server === '') return [`cluster "${cluster.name}" has no server`];
  const refusal = destinationUrlRefusal(cluster.server, policy.allowedHosts, {
    flag: '--allowed-remote-cluster-hosts',
    hosts: 'allowed remote cluster hosts',
  });
  return refusal === undefined ? [] : [`server ${cluster.server}: ${refusal}`];
}

/**
 * What no flag allows (docs/kubeconfig.md): a proxy would take the requests past the address checks,
 * and `as` would stack a second impersonation on the one the controller sends for the ApplySet's
 * account. Named here, so they stall as the rest of the policy does instead of failing each apply.
 */
function unsupportedProblems(cluster: KubeConfigCluster, user: KubeConfigUser): string[] {
  const impersonation = user.impersonationFields ?? (user.impersonateUser === undefined ? [] : ['as']);
  return [
    ...(cluster.proxyUrl === undefined || cluster.proxyUrl === ''
      ? []
      : [`cluster "${cluster.name}" sets proxy-url: a remote cluster is reached without a proxy`]),
    ...(impersonation.length === 0
      ? []
      : [
          `user "${user.name}" sets ${impersonation.join(', ')}: the controller impersonates the ApplySet's account itself, so a kubeconfig may not impersonate`,
        ]),
  ];
}

function fileProblems(
  cluster: KubeConfigCluster,
  user: KubeConfigUser,
  policy: RemoteKubeConfigPolicy,
): string[] {
  if (policy.allowFiles) return [];
  const files: [string | undefined, string, string][] = [
    [cluster.caFile, `cluster "${cluster.name}"`, 'certificate-authority (use certificate-authority-data)'],
    [user.certFile, `user "${user.name}"`, 'client-certificate (use client-certificate-data)'],
    [user.keyFile, `user "${user.name}"`, 'client-key (use client-key-data)'],
    [user.tokenFile, `user "${user.name}"`, 'tokenFile (use token)'],
  ];
  return files
    .filter(([file]) => file !== undefined && file !== '')
    .map(
      ([, who, field]) =>
        `${who} names a local file in ${field}: files are refused unless the controller runs with --allow-remote-kubeconfig-files`,
    );
}

function pluginProblems(user: KubeConfigUser, policy: RemoteKubeConfigPolicy): string[] {
  if (policy.allowExec) return [];
  const flag = 'plugins are refused unless the controller runs with --allow-remote-kubeconfig-exec';
  return [
    ...(user.exec === undefined
      ? []
      : [`user "${user.name}" has an exec plugin (${user.exec.command}): ${flag}`]),
    ...(user.authProvider === undefined ? [] : [`user "${user.name}" has an auth-provider: ${flag}`]),
  ];
}

/** The config with every entry's source the Secret, so messages name it rather than a path. */
function withSource(config: KubeConfig, from: string): KubeConfig {
  return {
    ...config,
    clusters: config.clusters.map((cluster) => ({ ...cluster, source: from })),
    users: config.users.map((user) => ({ ...user, source: from })),
  };
}
