import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface ProbeServerOptions {
  /** `:8080`, `127.0.0.1:8080`, `0` for any free port on all interfaces. */
  readonly address: string;
  readonly isHealthy: () => boolean;
  readonly isReady: () => boolean;
  readonly registry: Registry;
}

export interface ProbeServer {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** `/healthz`, `/readyz` and `/metrics` on one port, as the chart's probes and Service expect. */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const probe = (ok: boolean) => {
      response.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' });
      response.end(ok ? 'ok\n' : 'not ready\n');
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405).end();
      return;
    }
    switch (path) {
      case '/healthz':
        probe(options.isHealthy());
        return;
      case '/readyz':
        probe(options.isReady());
        return;
      case '/metrics':
        options.registry.metrics().then(
          (text) => {
            response.writeHead(200, { 'content-type': options.registry.contentType });
            response.end(text);
          },
          (error: unknown) => {
            response.writeHead(500, { 'content-type': 'text/plain' });
            response.end(`${error instanceof Error ? error.message : String(error)}\n`);
          },
        );
        return;
      default:
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('not found\n');
    }
  });
  return listenOn(server, options.address);
}

/**
 * Listens on a Go-style `[host]:port` address and resolves once bound, with the port actually taken
 * (useful with `:0`) and a close that also ends kept-alive connections.
 */
export async function listenOn(
  server: Server,
  address: string,
): Promise<{ readonly port: number; close(): Promise<void> }> {
  const { host, port } = parseListenAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Go's `host:port` listen syntax: an empty host means every interface. */
function parseListenAddress(address: string): { host: string | undefined; port: number } {
  const at = address.lastIndexOf(':');
  const host = at <= 0 ? undefined : address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const port = Number(at === -1 ? address : address.slice(at + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid listen address ${JSON.stringify(address)}: expected [host]:port`);
  }
  return { host, port };
}
