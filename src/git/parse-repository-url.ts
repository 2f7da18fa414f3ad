import { createHash } from 'node:crypto';
import { GitRepositoryNotFoundError } from './git-error.js';

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

export interface RepositoryUrl {
  /** The URL without userinfo or fragment: safe to log, and what we send (credentials go in a header). */
  readonly url: string;
  /** Credentials that were in the URL's userinfo, if any. */
  readonly credentials: BasicCredentials | undefined;
  /**
   * Names the repository's cache directory: a hash of `url`, so different credentials for one repository
   * share a cache and no credential ends up in a path.
   */
  readonly cacheKey: string;
}

/** Parses an `http(s)://` repository URL into its credential-free form, its userinfo and its cache key. */
export function parseRepositoryUrl(raw: string): RepositoryUrl {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // Node's TypeError carries the raw input, which may hold credentials, so it is not kept as the cause.
    throw new GitRepositoryNotFoundError('<unparseable URL>', 'not a valid URL');
  }
  const credentials =
    parsed.username === '' && parsed.password === ''
      ? undefined
      : { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  // `https://host/repo/` and `https://host/repo` are one repository; one cache.
  parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  const url = parsed.toString();
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new GitRepositoryNotFoundError(url, `unsupported scheme ${parsed.protocol} (use https or http)`);
  }
  const cacheKey = createHash('sha256').update(url).digest('hex').slice(0, 32);
  return { url, credentials, cacheKey };
}
