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
import type { RequestOptions } from 'node:https';
import { API_SERVER_POLICY, type DestinationPolicy } from '../net/destination-policy.js';
import { createOutboundAgent } from '../net/outbound-agent.js';
import type { Socket } from 'node:net';
import type { KubeCredentials } from './kube-credentials.js';

export interface KubeConnection {
  /** The server's URL, without a trailing slash. */
  readonly server: string;
  /** Where requests may go and how much of an answer is read (src/net). */
  readonly policy: DestinationPolicy;
  /** The agent (made once), the User-Agent and this request's credential headers. */
  options(): Promise<Omit<RequestOptions, 'headers'> & { headers: Record<string, string> }>;
  /** The server answered 401: true when the credential was dropped and a retry may get a new one. */
  unauthorized(): boolean;
  /**
   * Lets the connection go: its idle sockets are closed now, and each busy one when its request ends
   * (a reconcile still using it finishes), instead of the keep-alive pool holding them open for as
   * long as the process lives.
   */
  close(): void;
}

export interface KubeConnectionOptions {
  /**
   * The credentials of the kubeconfig, made once where it was loaded (the composition root) and
   * passed to every connection made from it: the controller keeps one connection for its Lease apart
   * from the reconciles' sockets, and both then share one exec plugin run, one tokenFile read.
   */
  readonly credentials: KubeCredentials;
  /** Sockets kept open to the server, which bounds the real concurrency; default 32. */
  readonly maxSockets?: number;
  /**
   * The destination's policy; default the controller's own API server (unchecked, unbounded). A remote
   * cluster's connection checks the addresses DNS answers before connecting and bounds its answers
   * (docs/remote-clusters.md).
   */
  readonly policy?: DestinationPolicy;
}

/** An agent of its own over the given credentials; their TLS material was read when they were made. */
export function createKubeConnection(options: KubeConnectionOptions): KubeConnection {
  const { credentials } = options;
  const { server, tls } = credentials;
  const policy = options.policy ?? API_SERVER_POLICY;
  // One agent, so a set of 1,000 objects does not pay a TLS handshake per request.
  const agent =
    new URL(server).protocol === 'https:'
      ? createOutboundAgent(policy, { maxSockets: options.maxSockets ?? 32, ...tls })
      : undefined;
  let closed = false;
  return {
    server,
    policy,
    options: async () => ({
      ...tls,
      agent,
      headers: { 'user-agent': credentials.userAgent, ...(await credentials.headers()) },
    }),
    unauthorized: () => credentials.unauthorized(),
    close: () => {
      if (agent === undefined || closed) return;
      closed = true;
      const pooled = () => Object.values(agent.freeSockets).flatMap((sockets) => sockets ?? []);
      // The agent's own listener (registered first) hands a released socket to a queued request, or
      // pools it; only a pooled one is ended here, so a request still queued on it is not cut.
      agent.on('free', (socket: Socket) => {
        if (pooled().includes(socket)) socket.destroy();
      });
      for (const socket of pooled()) socket.destroy();
    },
  };
}
