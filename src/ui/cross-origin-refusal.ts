import type { IncomingHttpHeaders } from 'node:http';

/** The first value of a header a proxy may have repeated or listed (`a, b`). */
function first(value: string | string[] | undefined): string | undefined {
  const one = Array.isArray(value) ? value[0] : value;
  return one?.split(',')[0]?.trim().toLowerCase() || undefined;
}

/** `host[:port]` of a Host header as a URL of `protocol` would name it (its default port dropped). */
function hostOf(header: string, protocol: string): string | undefined {
  try {
    return new URL(`${protocol}//${header}`).host;
  } catch {
    return undefined;
  }
}

/**
 * Why a request that changes something (a POST) is refused as coming from another site, or undefined
 * when it comes from the view's own pages. SameSite=Strict keeps the cookie off a cross-site request,
 * but not off a page of the same site on another port or subdomain, and it does not stop a cross-site
 * form from setting the cookie (login CSRF: the victim then sees, and acts as, the attacker's token).
 * So, as the Fetch Metadata and Origin checks the OWASP CSRF guidance describes:
 *
 * - `Sec-Fetch-Site` (every current browser sends it) must be `same-origin`, or `none` (the user
 *   typed it);
 * - `Origin` (every browser sends it on a POST) must name this server: its host and port equal to the
 *   `Host` header the browser sent, or to `X-Forwarded-Host` behind a proxy (a page of another origin
 *   cannot set either: a form cannot add headers, and a script's cross-origin request with them needs a
 *   CORS preflight this server never grants);
 * - a request with neither header is not from a browser's page of ours, and is refused too.
 */
export function crossOriginRefusal(headers: IncomingHttpHeaders): string | undefined {
  const site = first(headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `the browser says this request came from another site (Sec-Fetch-Site: ${site})`;
  }
  const origin = first(headers.origin);
  if (origin === undefined) {
    return site === undefined
      ? 'a request that changes something must come from a page of this view (it carries no Origin)'
      : undefined;
  }
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return `the request came from an origin that is not a URL (Origin: ${origin})`;
  }
  if (from.origin === 'null') return 'the request came from an opaque origin (Origin: null)';
  const hosts = [first(headers.host), first(headers['x-forwarded-host'])]
    .filter((host): host is string => host !== undefined)
    .map((host) => hostOf(host, from.protocol));
  if (hosts.includes(from.host)) return undefined;
  return `the request came from another origin (Origin: ${from.origin}), not from a page of this view`;
}
