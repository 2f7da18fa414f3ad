import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import {
  GitCredentialsNotForHostError,
  GitFetchError,
  GitSourceNotAllowedError,
  GitUnreachableError,
} from './git-error.js';
import type { SourceHostList } from '../net/host-list.js';
import { destinationUrlRefusal } from '../net/destination-url-refusal.js';

export interface FollowRedirectsOptions {
  /** The repository URL without credentials, for messages. */
  readonly repositoryUrl: string;
  /** Every hop must pass destinationUrlRefusal with these (empty: any host). */
  readonly allowedHosts: SourceHostList;
  /** Default 10 (simple-get's, which isomorphic-git used to follow them with). */
  readonly maxRedirects?: number;
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * Follows redirects for `inner` (which must not follow them itself), so that every hop is checked: its
 * target must be an allowed source, and a request carrying credentials (an `Authorization` header) is never
 * sent to another origin (scheme, host and port). Such a redirect is refused rather than followed without the
 * header: the server behind it would answer 401 and the failure would read as wrong credentials. curl, and so
 * git, drop credentials on a redirect to another host; simple-get, isomorphic-git's Node client, drops them
 * only when the host name changes, so a redirect to another port or from https to http kept them.
 *
 * 301, 302 and 303 turn a POST into a GET without body, as browsers, curl and simple-get do; 307 and 308
 * repeat it, which needs a body that can be sent twice (isomorphic-git sends its POST bodies as arrays).
 */
export function followRedirects(inner: HttpClient, options: FollowRedirectsOptions): HttpClient {
  const maxRedirects = options.maxRedirects ?? 10;
  return {
    request: async (request) => {
      const origin = new URL(request.url).origin;
      let current: GitHttpRequest = request;
      for (let hops = 0; ; hops += 1) {
        const response = await inner.request(current);
        const location = headerValue(response.headers, 'location');
        if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined) {
          return { ...response, url: current.url };
        }
        await discardBody(response);
        if (hops >= maxRedirects) {
          throw new GitUnreachableError(options.repositoryUrl, `more than ${maxRedirects} redirects`);
        }
        current = nextRequest(current, response.statusCode, location, origin, options);
      }
    },
  };
}

function nextRequest(
  current: GitHttpRequest,
  statusCode: number,
  location: string,
  origin: string,
  options: FollowRedirectsOptions,
): GitHttpRequest {
  let target: URL;
  try {
    target = new URL(location, current.url);
  } catch {
    throw new GitUnreachableError(options.repositoryUrl, 'a redirect to an invalid URL');
  }
  // Credentials in a Location are never used: only the Secret's credentials are, and only where it says.
  target.username = '';
  target.password = '';
  target.hash = '';
  const refusal = destinationUrlRefusal(target.href, options.allowedHosts);
  if (refusal !== undefined) {
    throw new GitSourceNotAllowedError(options.repositoryUrl, `redirected to ${target.origin}: ${refusal}`);
  }
  const headers = { ...current.headers };
  if (target.origin !== origin && hasHeader(headers, 'authorization')) {
    throw new GitCredentialsNotForHostError(
      options.repositoryUrl,
      `a request carrying them was redirected to ${target.origin}, another origin than ${origin}; use that URL in spec.source.url`,
    );
  }
  const toGet =
    statusCode === 303 || ((statusCode === 301 || statusCode === 302) && current.method === 'POST');
  if (toGet) {
    for (const name of Object.keys(headers)) {
      if (/^content-(type|length)$/i.test(name)) delete headers[name];
    }
    const { body: _dropped, ...rest } = current;
    return { ...rest, url: target.href, method: 'GET', headers };
  }
  if (current.body !== undefined && !Array.isArray(current.body)) {
    throw new GitFetchError(
      options.repositoryUrl,
      `redirected to ${target.origin} with a body that cannot be sent again`,
    );
  }
  return { ...current, url: target.href, headers };
}

function headerValue(headers: GitHttpResponse['headers'], name: string): string | undefined {
  if (headers === undefined) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return value === undefined || value === '' ? undefined : value;
}

function hasHeader(headers: Readonly<Record<string, string>>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

async function discardBody(response: GitHttpResponse): Promise<void> {
  await response.body?.return?.();
}
