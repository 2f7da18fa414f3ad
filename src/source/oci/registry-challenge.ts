/**
 * The `WWW-Authenticate` challenge of a registry's 401 (RFC 7235, as the distribution spec's token
 * authentication uses it): `Bearer realm="https://auth.example/token",service="registry",scope="…"`
 * or `Basic realm="…"`. Pure.
 */

export interface Challenge {
  /** Lowercase: `bearer`, `basic`, or what else the registry named. */
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** The first challenge of the header; undefined when there is none. */
export function parseChallenge(header: string | string[] | undefined): Challenge | undefined {
  const text = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (text === '') return undefined;
  const space = text.indexOf(' ');
  const scheme = (space === -1 ? text : text.slice(0, space)).toLowerCase();
  return { scheme, params: space === -1 ? {} : parseParams(text.slice(space + 1)) };
}

/** `a="x, y", b=z` → { a: 'x, y', b: 'z' }: quoted values may hold commas and escaped quotes. */
function parseParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  let at = 0;
  while (at < text.length) {
    while (at < text.length && (text[at] === ',' || text[at] === ' ')) at += 1;
    const equals = text.indexOf('=', at);
    if (equals === -1) break;
    const key = text.slice(at, equals).trim().toLowerCase();
    at = equals + 1;
    let value = '';
    if (text[at] === '"') {
      at += 1;
      while (at < text.length && text[at] !== '"') {
        if (text[at] === '\\' && at + 1 < text.length) at += 1;
        value += text[at];
        at += 1;
      }
      at += 1;
    } else {
      const comma = text.indexOf(',', at);
      const end = comma === -1 ? text.length : comma;
      value = text.slice(at, end).trim();
      at = end;
    }
    if (key !== '') params[key] = value;
  }
  return params;
}

/** The token request of a Bearer challenge: its realm with `service` and `scope` (the challenge's, else `scope`). */
export function tokenUrl(challenge: Challenge, scope: string): URL | undefined {
  const realm = challenge.params['realm'];
  if (realm === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const service = challenge.params['service'];
  if (service !== undefined) url.searchParams.set('service', service);
  url.searchParams.set('scope', challenge.params['scope'] ?? scope);
  return url;
}
