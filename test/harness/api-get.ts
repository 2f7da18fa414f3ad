import { request as httpsRequest } from 'node:https';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { ControlPlaneError } from './control-plane-error.js';

// Reaching the local control plane over loopback: a free port to listen on, and GETs that trust only
// its own self-signed certificate.

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolvePort(address.port);
        else reject(new ControlPlaneError('no free port'));
      });
    });
  });
}

export async function httpOk(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return response.ok;
}

/** A GET against the apiserver that trusts only its own self-signed certificate. */
export async function apiGet(
  server: string,
  path: string,
  caPath: string,
  token: string,
): Promise<{ status: number; body: string }> {
  const ca = await readFile(caPath);
  return new Promise((resolveGet, reject) => {
    const request = httpsRequest(
      new URL(path, server),
      { ca, headers: { authorization: `Bearer ${token}` }, timeout: 2000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolveGet({ status: response.statusCode ?? 0, body }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new ControlPlaneError(`GET ${path}: timed out`)));
    request.on('error', reject);
    request.end();
  });
}
