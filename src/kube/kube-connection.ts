/**
 * The connection to one API server that clients share: its address, the TLS material and credentials
 * from the kubeconfig, and one keep-alive agent. The controller's clients for the identities it
 * impersonates all use one connection: impersonation is a header of each request, which the API
 * server authenticates and authorizes request by request, so sharing the sockets lends no rights
 * (client-go likewise shares one transport between impersonating configs with the same TLS). One
 * identity then costs no TLS handshake, agent or socket pool of its own. The agent is made once; the
 * credential headers are resolved per request (see createKubeCredentials), so a rotated token is
 * used without a new connection.
 */
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import {
  createKubeCredentials,
  type KubeCredentialOptions,
  type KubeCredentials,
} from './kube-credentials.js';
import type { KubeConfig } from './kubeconfig-model.js';

export interface KubeConnection {
  /** The server's URL, without a trailing slash. */
  readonly server: string;
  /** The agent (made once) and this request's credential headers. */
  options(): Promise<Omit<RequestOptions, 'headers'> & { headers: Record<string, string> }>;
  /** The server answered 401: true when the credential was dropped and a retry may get a new one. */
  unauthorized(): boolean;
}

export interface KubeConnectionOptions {
  readonly kubeConfig: KubeConfig;
  /** Sockets kept open to the server, which bounds the real concurrency; default 32. */
  readonly maxSockets?: number;
  /** How credentials are cached (tokenFile period, clock); tests shorten the period. */
  readonly credentials?: KubeCredentialOptions;
}

/**
 * The credentials of each kubeconfig object, shared by all its connections (the controller keeps
 * one for its Lease apart from the reconciles' sockets): one exec plugin run, one tokenFile read.
 */
const sharedCredentials = new WeakMap<KubeConfig, KubeCredentials>();

/** Reads the TLS material now: a kubeconfig that cannot be used throws a KubeConfigError here. */
export function createKubeConnection(options: KubeConnectionOptions): KubeConnection {
  const credentials = credentialsOf(options);
  const { server, tls } = credentials;
  // One agent, so a set of 1,000 objects does not pay a TLS handshake per request.
  const agent =
    new URL(server).protocol === 'https:'
      ? new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets ?? 32, ...tls })
      : undefined;
  return {
    server,
    options: async () => ({ ...tls, agent, headers: await credentials.headers() }),
    unauthorized: () => credentials.unauthorized(),
  };
}

function credentialsOf(options: KubeConnectionOptions): KubeCredentials {
  // Options of their own (a test's clock) make credentials of their own.
  if (options.credentials !== undefined)
    return createKubeCredentials(options.kubeConfig, options.credentials);
  let credentials = sharedCredentials.get(options.kubeConfig);
  if (credentials === undefined) {
    credentials = createKubeCredentials(options.kubeConfig);
    sharedCredentials.set(options.kubeConfig, credentials);
  }
  return credentials;
}
