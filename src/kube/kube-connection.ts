/**
 * The connection to one API server that clients share: its address, the TLS material and credentials
 * from the kubeconfig, and one keep-alive agent. The controller's clients for the identities it
 * impersonates all use one connection: impersonation is a header of each request, which the API
 * server authenticates and authorizes request by request, so sharing the sockets lends no rights
 * (client-go likewise shares one transport between impersonating configs with the same TLS). One
 * identity then costs no TLS handshake, agent or socket pool of its own.
 */
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface KubeConnection {
  /** The server's URL, without a trailing slash. */
  readonly server: string;
  /** TLS, credentials and the agent, resolved from the kubeconfig once, on the first request. */
  options(): Promise<RequestOptions>;
}

export interface KubeConnectionOptions {
  readonly kubeConfig: KubeConfig;
  /** Sockets kept open to the server, which bounds the real concurrency; default 32. */
  readonly maxSockets?: number;
}

export function createKubeConnection(options: KubeConnectionOptions): KubeConnection {
  const cluster = options.kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const server = cluster.server.replace(/\/+$/, '');
  const base = new URL(server);
  let prepared: Promise<RequestOptions> | undefined;

  const prepare = async (): Promise<RequestOptions> => {
    const opts: RequestOptions = { headers: {} };
    await options.kubeConfig.applyToHTTPSOptions(opts);
    // One agent, so a set of 1,000 objects does not pay a TLS handshake per request.
    const agent =
      base.protocol === 'https:'
        ? new HttpsAgent({
            keepAlive: true,
            maxSockets: options.maxSockets ?? 32,
            ca: opts.ca,
            cert: opts.cert,
            key: opts.key,
            pfx: opts.pfx,
            passphrase: opts.passphrase,
            rejectUnauthorized: opts.rejectUnauthorized,
            servername: opts.servername,
          })
        : undefined;
    return { ...opts, agent };
  };

  return {
    server,
    options: () => (prepared ??= prepare()),
  };
}
