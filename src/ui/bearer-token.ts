import type { IncomingHttpHeaders } from 'node:http';
import { UI_TOKEN_COOKIE } from './ui-access.js';

/**
 * A token longer than this is refused unread: a service account's token is about 1 KiB and an OIDC ID
 * token a few, so anything past it is no token the cluster issued, and not worth hashing or sending on.
 */
const MAX_TOKEN_CHARS = 16 * 1024;

/**
 * The bearer token a request carries: `Authorization: Bearer <token>` first (a script, `curl`), else the
 * cookie the sign-in form set (a browser). Undefined when there is none, or it cannot be a token
 * (empty, too long, with spaces or control characters).
 */
export function bearerTokenOf(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    // A request that sends an Authorization header means that one: it does not fall back to a cookie.
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    return match === null ? undefined : plausibleToken(match[1] ?? '');
  }
  const cookie = cookieValue(headers.cookie, UI_TOKEN_COOKIE);
  return cookie === undefined ? undefined : plausibleToken(cookie);
}

/** The value of the cookie `name` in a Cookie header (RFC 6265: `a=1; b=2`), percent-decoded. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    const raw = pair.slice(at + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function plausibleToken(token: string): string | undefined {
  if (token === '' || token.length > MAX_TOKEN_CHARS) return undefined;
  // Printable ASCII without spaces: what a bearer token may hold (RFC 6750's b64token and more).
  return /^[\x21-\x7e]+$/.test(token) ? token : undefined;
}
