/**
 * The kubeconfig as this tool reads it: clusters, users and contexts by name and the current
 * context, with every path already absolute. The field names are those `@kubernetes/client-node`
 * uses for its own entries, so a KubeConfig object of that library (tests and scripts still make
 * them) is one of these too; the parser (parseKubeConfigFile) and the merge (loadKubeConfig) make
 * them from files without loading that library.
 */

/** One `clusters[].cluster`: where the API server is and how to trust it. */
export interface KubeConfigCluster {
  readonly name: string;
  readonly server: string;
  /** `certificate-authority-data`, base64 as in the file. */
  readonly caData?: string;
  /** `certificate-authority`, absolute. */
  readonly caFile?: string;
  /** `insecure-skip-tls-verify`. */
  readonly skipTLSVerify?: boolean;
  /** `tls-server-name`: the name the server certificate is checked against. */
  readonly tlsServerName?: string;
  /** `proxy-url`: refused when the cluster is used (no proxy support). */
  readonly proxyUrl?: string;
  /** The kubeconfig file that defined it, for messages. */
  readonly source?: string;
}

/** `users[].user.exec`: a credential plugin (client.authentication.k8s.io v1 or v1beta1). */
export interface KubeConfigExec {
  readonly apiVersion: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value: string }[];
  readonly installHint?: string;
  readonly provideClusterInfo?: boolean;
  /** `Never`, `IfAvailable` or `Always`; this tool never runs a plugin interactively. */
  readonly interactiveMode?: string;
}

/** One `users[].user`: the credentials. */
export interface KubeConfigUser {
  readonly name: string;
  readonly token?: string;
  /** `tokenFile`, absolute; re-read while the process runs (see createKubeCredentials). */
  readonly tokenFile?: string;
  /** `client-certificate-data` and `client-key-data`, base64 as in the file. */
  readonly certData?: string;
  readonly keyData?: string;
  /** `client-certificate` and `client-key`, absolute. */
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly exec?: KubeConfigExec;
  /** `auth-provider` (legacy oidc, gcp, azure): handed to `@kubernetes/client-node`, loaded then. */
  readonly authProvider?: unknown;
  /** `as`: refused when the user is used, as are `as-groups`, `as-uid` and `as-user-extra`. */
  readonly impersonateUser?: string;
  /** Which of the `as-…` fields the entry sets, for the refusal. */
  readonly impersonationFields?: readonly string[];
  readonly source?: string;
}

/** One `contexts[].context`. */
export interface KubeConfigContext {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string;
}

export interface KubeConfig {
  readonly clusters: readonly KubeConfigCluster[];
  readonly users: readonly KubeConfigUser[];
  readonly contexts: readonly KubeConfigContext[];
  readonly currentContext: string;
}

export function currentContextOf(config: KubeConfig): KubeConfigContext | undefined {
  return config.contexts.find((context) => context.name === config.currentContext);
}

export function currentClusterOf(config: KubeConfig): KubeConfigCluster | undefined {
  const context = currentContextOf(config);
  return context === undefined ? undefined : config.clusters.find((c) => c.name === context.cluster);
}

/** The current context's user; a context naming no user (or an unknown one) has no credentials. */
export function currentUserOf(config: KubeConfig): KubeConfigUser | undefined {
  const context = currentContextOf(config);
  return context === undefined ? undefined : config.users.find((u) => u.name === context.user);
}

/** `user "name" of kubeconfig FILE` (or `cluster "name" …`): where a message about an entry points. */
export function describeEntry(
  what: 'user' | 'cluster',
  entry: { readonly name: string; readonly source?: string },
) {
  return `${what} "${entry.name}"${entry.source === undefined ? '' : ` of kubeconfig ${entry.source}`}`;
}
