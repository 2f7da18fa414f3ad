/**
 * The credentials of the kubeconfig's current context, as a client sends them: TLS material read
 * once (for the connection's agent), and the headers of each request resolved per request, so a
 * credential that changes is picked up — a tokenFile is re-read at most once a period (a minute, as
 * client-go's cachingTokenSource), an exec plugin's token is kept until it expires. An
 * `auth-provider` user (legacy oidc, gcp, azure) is handed to `@kubernetes/client-node`, loaded
 * only then.
 */
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { messageOf } from '../errors/message-of.js';
import { createExecCredentialSource } from './exec-credential.js';
import {
  currentClusterOf,
  currentContextOf,
  currentUserOf,
  describeEntry,
  type KubeConfig,
  type KubeConfigCluster,
  type KubeConfigUser,
} from './kubeconfig-model.js';
import { KubeConfigError } from './kubeconfig-error.js';
import { kubeUserAgent } from './user-agent.js';

/** The TLS options of the agent: the CA, the client certificate, the name checked. */
type KubeTls = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

export interface KubeCredentials {
  /** The server's URL, without a trailing slash. */
  readonly server: string;
  readonly tls: KubeTls;
  /** The User-Agent every request carries (kubeUserAgent). */
  readonly userAgent: string;
  /** The headers that authenticate one request (`Authorization`, when the user has a credential). */
  headers(): Promise<Record<string, string>>;
  /** The server answered 401: drops what is cached; true when a retry may get another credential. */
  unauthorized(): boolean;
}

export interface KubeCredentialOptions {
  /** How long a tokenFile's token is used before the file is read again; default 60 s. */
  readonly tokenFileCacheMs?: number;
  readonly now?: () => number;
  /** The environment of exec plugins; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Default the CLI's, `kubeUserAgent('applyset')`. */
  readonly userAgent?: string;
}

/** Reads the TLS material now (a missing file fails here, a KubeConfigError); headers come later. */
export function createKubeCredentials(
  config: KubeConfig,
  options: KubeCredentialOptions = {},
): KubeCredentials {
  const cluster = currentClusterOf(config);
  if (cluster === undefined) throw new KubeConfigError(`context "${config.currentContext}" names no cluster`);
  const clusterWhere = describeEntry('cluster', cluster);
  if (cluster.server === '') throw new KubeConfigError(`${clusterWhere} has no server`);
  if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== '') {
    throw new KubeConfigError(
      `${clusterWhere}: proxy-url is not supported; reach the server without a proxy`,
    );
  }
  const user: KubeConfigUser = currentUserOf(config) ?? { name: currentContextOf(config)?.user ?? '' };
  const where = describeEntry('user', user);
  const impersonation = user.impersonationFields ?? (user.impersonateUser === undefined ? [] : ['as']);
  if (impersonation.length > 0) {
    throw new KubeConfigError(`${where}: impersonation (${impersonation.join(', ')}) is not supported`);
  }
  const tls = tlsOf(cluster, user, clusterWhere, where);
  const headers = headerSource(config, cluster, user, tls, options);
  const userAgent = options.userAgent ?? kubeUserAgent('applyset');
  return { server: cluster.server.replace(/\/+$/, ''), tls, userAgent, ...headers };
}

function tlsOf(
  cluster: KubeConfigCluster,
  user: KubeConfigUser,
  clusterWhere: string,
  where: string,
): KubeTls {
  const ca = material(cluster.caData, cluster.caFile, `${clusterWhere}: certificate-authority`);
  const cert = material(user.certData, user.certFile, `${where}: client-certificate`);
  const key = material(user.keyData, user.keyFile, `${where}: client-key`);
  if ((cert === undefined) !== (key === undefined)) {
    throw new KubeConfigError(
      `${where} has a client ${cert === undefined ? 'key' : 'certificate'} without its pair`,
    );
  }
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined || key === undefined ? {} : { cert, key }),
    ...(cluster.skipTLSVerify === true ? { rejectUnauthorized: false } : {}),
    ...(cluster.tlsServerName === undefined || cluster.tlsServerName === ''
      ? {}
      : { servername: cluster.tlsServerName }),
  };
}

/** The PEM of `…-data` (base64) or of the file; the data wins when both are set, as in client-go. */
function material(data: string | undefined, file: string | undefined, what: string): string | undefined {
  if (data !== undefined && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  if (file === undefined || file === '') return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new KubeConfigError(`${what} ${file} cannot be read: ${fileErrorReason(error)}`, { cause: error });
  }
}

type HeaderSource = Pick<KubeCredentials, 'headers' | 'unauthorized'>;

/** Where the Authorization header comes from: auth-provider, exec, tokenFile, token, basic; or none. */
function headerSource(
  config: KubeConfig,
  cluster: KubeConfigCluster,
  user: KubeConfigUser,
  tls: KubeTls,
  options: KubeCredentialOptions,
): HeaderSource {
  if (user.authProvider !== undefined) return authProviderSource(config, cluster, user);
  if (user.exec !== undefined) {
    const caPem = typeof tls.ca === 'string' ? tls.ca : undefined;
    const source = createExecCredentialSource({ ...user, exec: user.exec }, cluster, {
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(caPem === undefined ? {} : { caPem }),
    });
    return tokenHeaders(
      () => source.token(),
      () => source.invalidate(),
    );
  }
  if (user.tokenFile !== undefined && user.tokenFile !== '')
    return tokenFileSource(user.tokenFile, user, options);
  if (user.token !== undefined && user.token !== '') {
    const fixed = Promise.resolve(user.token);
    return tokenHeaders(
      () => fixed,
      () => false,
    );
  }
  if (user.username !== undefined && user.username !== '') {
    const basic = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
    return { headers: () => Promise.resolve({ authorization: basic }), unauthorized: () => false };
  }
  return { headers: () => Promise.resolve({}), unauthorized: () => false };
}

function tokenHeaders(token: () => Promise<string>, unauthorized: () => boolean): HeaderSource {
  return { headers: async () => ({ authorization: `Bearer ${await token()}` }), unauthorized };
}

/**
 * A token read from a file, read again once `tokenFileCacheMs` passed (kubelet rotates projected
 * tokens) or after a 401. A read that fails once a token was read keeps the last one, as client-go.
 */
function tokenFileSource(file: string, user: KubeConfigUser, options: KubeCredentialOptions): HeaderSource {
  const now = options.now ?? Date.now;
  const period = options.tokenFileCacheMs ?? 60_000;
  let cached: { token: string; readAt: number } | undefined;
  const read = (): string => {
    if (cached !== undefined && now() - cached.readAt < period) return cached.token;
    try {
      const token = readFileSync(file, 'utf8').trim();
      cached = { token, readAt: now() };
      return token;
    } catch (error) {
      if (cached !== undefined) return cached.token;
      const where = describeEntry('user', user);
      throw new KubeConfigError(`${where}: tokenFile ${file} cannot be read: ${fileErrorReason(error)}`, {
        cause: error,
      });
    }
  };
  return tokenHeaders(
    () => Promise.resolve().then(read),
    () => {
      const had = cached !== undefined;
      cached = undefined;
      return had;
    },
  );
}

/** A legacy auth-provider user: `@kubernetes/client-node` (its providers refresh the token). */
function authProviderSource(
  config: KubeConfig,
  cluster: KubeConfigCluster,
  user: KubeConfigUser,
): HeaderSource {
  const context = currentContextOf(config);
  let loaded: Promise<(opts: RequestOptions) => Promise<void>> | undefined;
  const load = async () => {
    const { KubeConfig: ClientNodeConfig } = await import('@kubernetes/client-node');
    const kc = new ClientNodeConfig();
    const name = context?.name ?? config.currentContext;
    kc.loadFromOptions({
      clusters: [{ ...cluster, skipTLSVerify: cluster.skipTLSVerify ?? false }],
      users: [{ name: user.name, authProvider: user.authProvider }],
      contexts: [{ name, cluster: cluster.name, user: user.name }],
      currentContext: name,
    });
    return (opts: RequestOptions) => kc.applyToHTTPSOptions(opts);
  };
  return {
    headers: async (): Promise<Record<string, string>> => {
      const apply = await (loaded ??= load());
      const opts: RequestOptions = { headers: {} };
      await apply(opts);
      const authorization = (opts.headers as Record<string, string | undefined>)['Authorization'];
      return authorization === undefined ? {} : { authorization };
    },
    unauthorized: () => false,
  };
}

/** `ENOENT: no such file or directory`: the reason, without the path the message already names. */
function fileErrorReason(error: unknown): string {
  const message = messageOf(error);
  return /^E[A-Z]+: /.test(message) ? message.replace(/, \w+ '.*'$/, '') : message;
}
