/**
 * Requests through an HTTP proxy (docs/tls-and-proxies.md): an https:// address through a CONNECT
 * tunnel, TLS spoken end to end with the server inside it (the proxy sees neither the request nor the
 * answer, and the server's certificate is checked as without a proxy); an http:// address as an
 * absolute-form request to the proxy. The tunnel is named by the target's host name: the proxy resolves it.
 */
import { request as httpRequest } from 'node:http';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { ProxyRefusedError } from './proxy-refused-error.js';

export interface OutboundProxy {
  /** `http://host:port`, without credentials. */
  readonly url: URL;
  /** `Basic …` for the proxy's `Proxy-Authorization`, when it needs credentials. */
  readonly authorization?: string;
  /**
   * A tenant's proxy (an ApplySet's spec.source.proxySecretRef): its address is a destination the tenant
   * names, checked by the kind's policy as the source's own. The operator's (HTTPS_PROXY) is not.
   */
  readonly tenant: boolean;
}

/** The proxy of an address that may carry `user:password@`, those moved to a Proxy-Authorization. */
export function outboundProxyOf(
  address: URL,
  tenant: boolean,
  credentials?: ProxyCredentials,
): OutboundProxy {
  const url = new URL(address.href);
  const given =
    credentials ??
    (url.username === ''
      ? undefined
      : { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) });
  url.username = '';
  url.password = '';
  return {
    url,
    tenant,
    ...(given === undefined
      ? {}
      : { authorization: `Basic ${Buffer.from(`${given.username}:${given.password}`).toString('base64')}` }),
  };
}

interface ProxyCredentials {
  readonly username: string;
  readonly password: string;
}

/** The TLS options a tunnel's handshake takes from its request. */
export type TunnelTls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>;

/** What a tunnel's TLS needs: the request's material, the deadline, the proxy socket's lookup. */
interface TunnelOptions {
  readonly tls: TunnelTls;
  readonly lookup: LookupFunction | undefined;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
}

/**
 * A TLS socket to `target` through a CONNECT tunnel of `proxy`, once its handshake is done: what
 * `createConnection` of an https request hands it. Rejects with ProxyRefusedError when the proxy answers
 * other than 200, or with Node's TLS error (its code says which certificate) as a direct connection would.
 */
export function openTunnel(proxy: OutboundProxy, target: URL, options: TunnelOptions): Promise<TLSSocket> {
  const port = target.port === '' ? '443' : target.port;
  const authority = `${target.hostname}:${port}`;
  const host = target.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const connect = httpRequest({
      host: proxy.url.hostname,
      port: proxy.url.port === '' ? 80 : Number(proxy.url.port),
      method: 'CONNECT',
      path: authority,
      agent: false,
      headers: {
        host: authority,
        ...(proxy.authorization === undefined ? {} : { 'proxy-authorization': proxy.authorization }),
      },
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const timer = setTimeout(
      () =>
        connect.destroy(
          new Error(`no tunnel through the proxy ${proxy.url.host} within ${options.timeoutMs} ms`),
        ),
      options.timeoutMs,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    connect.once('error', fail);
    connect.once('connect', (response, socket: Socket) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        fail(new ProxyRefusedError(proxy.url.host, authority, response.statusCode ?? 0));
        return;
      }
      const secure = tlsConnect({
        socket,
        host,
        // SNI names a host, never an address (RFC 6066); a kubeconfig's tls-server-name wins.
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ...options.tls,
      });
      secure.once('error', fail);
      secure.once('secureConnect', () => {
        clearTimeout(timer);
        secure.off('error', fail);
        resolve(secure);
      });
    });
    connect.end();
  });
}
