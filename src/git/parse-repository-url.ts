import { createHash } from 'node:crypto';
import { GitRepositoryNotFoundError } from './git-error.js';

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/** Where an ssh:// (or scp-like) repository is: the account, the server and what upload-pack is told. */
interface SshTarget {
  /** The ssh account (`git` on the forges); a name, not a secret. Default `git`. */
  readonly username: string;
  readonly host: string;
  readonly port: number;
  /** The path as `git-upload-pack '<path>'` gets it: as written in the scp-like form, else the URL's. */
  readonly path: string;
}

export interface RepositoryUrl {
  /** The URL without userinfo or fragment: safe to log, and what we send (credentials go in a header). */
  readonly url: string;
  /** Credentials that were in the URL's userinfo, if any (http(s) only). */
  readonly credentials: BasicCredentials | undefined;
  /**
   * Names the repository's cache directory: a hash of `url`, so different credentials for one repository
   * share a cache and no credential ends up in a path.
   */
  readonly cacheKey: string;
  /** Set for an ssh:// or scp-like (`git@host:path`) URL: fetched over SSH. */
  readonly ssh: SshTarget | undefined;
}

/** git's scp-like syntax, `user@host:path`: a user is required here, so no scheme (`ext::`) reads as one. */
const SCP_LIKE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):([^\s]+)$/;

/**
 * Parses an `http(s)://`, `ssh://` or scp-like (`git@host:org/repo.git`) repository URL into its
 * credential-free form, its userinfo and its cache key. The scp-like form is written as its ssh:// URL.
 * An ssh URL may name an account, never a password: the key is in the credentials Secret.
 */
export function parseRepositoryUrl(raw: string): RepositoryUrl {
  const scp = raw.includes('://') ? null : SCP_LIKE.exec(raw);
  let parsed: URL;
  try {
    parsed = new URL(scp === null ? raw : `ssh://${scp[1]}@${scp[2]}/${(scp[3] ?? '').replace(/^\/+/, '')}`);
  } catch {
    // Node's TypeError carries the raw input, which may hold credentials, so it is not kept as the cause.
    throw new GitRepositoryNotFoundError('<unparseable URL>', 'not a valid URL');
  }
  if (parsed.protocol === 'ssh:') return sshRepository(parsed, scp?.[3]);
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
    throw new GitRepositoryNotFoundError(
      url,
      `unsupported scheme ${parsed.protocol} (use https, http or ssh)`,
    );
  }
  return { url, credentials, cacheKey: cacheKeyOf(url), ssh: undefined };
}

function sshRepository(parsed: URL, scpPath: string | undefined): RepositoryUrl {
  const username = parsed.username === '' ? 'git' : decodeURIComponent(parsed.username);
  const host = parsed.hostname.toLowerCase();
  const port = parsed.port === '' ? 22 : Number(parsed.port);
  const pathname = decodeURIComponent(parsed.pathname).replace(/\/+$/, '');
  const url = `ssh://${encodeURIComponent(username)}@${host}${port === 22 ? '' : `:${port}`}${parsed.pathname.replace(/\/+$/, '')}`;
  if (parsed.password !== '') {
    throw new GitRepositoryNotFoundError(url, 'an ssh URL carries no password (the key is in secretRef)');
  }
  if (
    host === '' ||
    pathname === '' ||
    pathname === '/' ||
    parsed.search !== '' ||
    /[\0\n']/.test(pathname)
  ) {
    throw new GitRepositoryNotFoundError(url, 'an ssh URL needs a host and a repository path');
  }
  // As git: `ssh://host/~/repo` is home-relative (`~/repo`), like the scp-like `host:~/repo`.
  const path = scpPath ?? (pathname.startsWith('/~') ? pathname.slice(1) : pathname);
  return { url, credentials: undefined, cacheKey: cacheKeyOf(url), ssh: { username, host, port, path } };
}

function cacheKeyOf(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 32);
}
