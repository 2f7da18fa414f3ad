import { isIP } from 'node:net';
import type { UiAccess, UiAccessDecision } from './ui-access.js';

/** Whether an address to listen on, or a Host header's name, stays on this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** The hostname of a Host header (`127.0.0.1:8001`, `[::1]:8001`, `localhost`). */
function hostnameOf(header: string | undefined): string {
  if (header === undefined) return '';
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return '';
  }
}

/**
 * The access of `applyset ui`: its one user, who reads everything as the kubeconfig's user (the API
 * server decides what that is). Only a request that names a loopback host gets through: a web page
 * elsewhere that points a name of its own at 127.0.0.1 (DNS rebinding) must not read the view.
 */
export function localUiAccess(viewerName: string): UiAccess {
  const viewer = { name: viewerName, mayRead: () => Promise.resolve(true) };
  return (request): Promise<UiAccessDecision> => {
    if (!isLoopbackHost(hostnameOf(request.headers.host))) {
      return Promise.resolve({
        kind: 'refused',
        status: 403,
        message: 'This view answers only to a loopback address (127.0.0.1, localhost, ::1).',
      });
    }
    return Promise.resolve({ kind: 'viewer', viewer });
  };
}
