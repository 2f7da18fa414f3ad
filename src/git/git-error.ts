import { IntentError, type FailureStep } from '../errors/intent-error.js';

/**
 * Why fetching from Git failed, as classes whose intent the controller maps to conditions and requeue:
 * `stalled` needs a human (wrong credentials, a ref or repository that does not exist, a path that leaves
 * the repository), `retryable` may fix itself (the server is down or slow). Messages name the repository
 * by its URL without credentials; they never contain a password or token.
 */
type GitErrorIntent = 'stalled' | 'retryable';

type GitErrorCode =
  | 'GIT_AUTH_FAILED'
  | 'GIT_UNREACHABLE'
  | 'GIT_REF_NOT_FOUND'
  | 'GIT_REPOSITORY_NOT_FOUND'
  | 'GIT_FETCH_FAILED'
  | 'GIT_SOURCE_NOT_ALLOWED'
  | 'GIT_CREDENTIALS_NOT_FOR_HOST'
  | 'GIT_INVALID_PATH'
  | 'GIT_PATH_NOT_FOUND'
  | 'GIT_UNSAFE_TREE'
  | 'GIT_REPOSITORY_TOO_LARGE'
  | 'GIT_SSH_AUTH_FAILED'
  | 'GIT_HOST_KEY_MISMATCH';

abstract class GitError extends IntentError {
  abstract readonly code: GitErrorCode;
  abstract override readonly intent: GitErrorIntent;
  constructor(
    message: string,
    /** The repository URL, credentials removed. */
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The server answered 401 or 403: the Secret's credentials are missing or wrong. */
export class GitAuthError extends GitError {
  override readonly name = 'GitAuthError';
  readonly code = 'GIT_AUTH_FAILED';
  readonly reason = 'AuthenticationFailed';
  readonly intent = 'stalled';
  constructor(
    url: string,
    readonly statusCode: number,
    options?: { cause?: unknown },
  ) {
    super(`authentication failed for ${url} (HTTP ${statusCode})`, url, options);
  }

  /** At the fetch, what to check: the Secret the credentials came from, or that none was named. */
  override describe(at: FailureStep | undefined): string {
    if (at?.step !== 'fetch') return this.message;
    const hint =
      at.secretName === undefined
        ? 'the repository needs credentials: set spec.source.secretRef'
        : `check username/password or token in Secret ${at.secretName}`;
    return `${this.message}: ${hint}`;
  }
}

/**
 * An ssh source's key was refused by the server or could not be read (a wrong passphrase), or the source
 * has no SSH key to offer: the Secret (identity, password, known_hosts) needs fixing.
 */
export class GitSshAuthError extends GitError {
  override readonly name = 'GitSshAuthError';
  readonly code = 'GIT_SSH_AUTH_FAILED';
  readonly reason = 'AuthenticationFailed';
  readonly intent = 'stalled';
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`SSH authentication failed for ${url}: ${detail}`, url, options);
  }
}

/**
 * The SSH server showed a host key that known_hosts of the source's Secret does not list for it (no trust
 * on first use): a server that changed its key, or another server in its place. Nothing was sent to it.
 * The message names the key seen as ssh does, to compare with the one the server's owner publishes.
 */
export class GitHostKeyMismatchError extends GitError {
  override readonly name = 'GitHostKeyMismatchError';
  readonly code = 'GIT_HOST_KEY_MISMATCH';
  readonly reason = 'HostKeyMismatch';
  readonly intent = 'stalled';
  constructor(
    url: string,
    /** `host` on port 22, else `[host]:port`, as known_hosts names it. */
    readonly host: string,
    /** `SHA256:…` of the key the server showed. */
    readonly fingerprint: string,
    readonly keyType: string,
    options?: { cause?: unknown },
  ) {
    super(
      `host key mismatch for ${url}: the server's ${keyType} key ${fingerprint} is not in known_hosts for ${host}`,
      url,
      options,
    );
  }
}

/**
 * No Git server answered: connection refused, reset or timed out, a DNS or TLS failure, an HTTP status
 * other than 401/403 (a 404, a 5xx from a proxy) or an answer that is not Git's smart HTTP. One message
 * for all of them, because a tenant chooses the URL: telling a closed port from an open one that speaks
 * something else would make the controller a port scanner. `detail` says which, for the controller's log
 * only. Retried: a server that is down may come back.
 */
export class GitUnreachableError extends GitError {
  override readonly name = 'GitUnreachableError';
  readonly code = 'GIT_UNREACHABLE';
  readonly reason = 'GitUnreachable';
  readonly intent = 'retryable';
  constructor(
    url: string,
    /** What happened (`ECONNREFUSED`, `HTTP 404` …): logged, never put in the status. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`Git source ${url} unreachable or not a Git repository`, url, options);
  }
}

/** The branch, tag or commit does not exist in the repository (or the repository has no commits). */
export class GitRefNotFoundError extends GitError {
  override readonly name = 'GitRefNotFoundError';
  readonly code = 'GIT_REF_NOT_FOUND';
  readonly reason = 'GitRefNotFound';
  readonly intent = 'stalled';
  constructor(
    url: string,
    /** `branch main`, `tag v1`, `commit 0123…`. */
    readonly ref: string,
    options?: { cause?: unknown },
  ) {
    super(`${ref} not found in ${url}`, url, options);
  }
}

/** The URL is no repository URL at all (unparseable, another scheme). */
export class GitRepositoryNotFoundError extends GitError {
  override readonly name = 'GitRepositoryNotFoundError';
  readonly code = 'GIT_REPOSITORY_NOT_FOUND';
  readonly reason = 'RepositoryNotFound';
  readonly intent = 'stalled';
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`no Git repository at ${url}: ${detail}`, url, options);
  }
}

/** Anything else: an unexpected HTTP status, a broken pack. Retried, since a cache reset may cure it. */
export class GitFetchError extends GitError {
  override readonly name = 'GitFetchError';
  readonly code = 'GIT_FETCH_FAILED';
  readonly reason = 'GitFetchFailed';
  readonly intent = 'retryable';
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`fetching ${url} failed: ${detail}`, url, options);
  }
}

/**
 * The controller may not talk to this source: a link-local or cloud metadata address (also when a name
 * resolves to one), a well-known metadata host name, or a host outside the allowed source hosts, for the
 * URL itself or for a redirect. Nothing was fetched; changing the URL (or the controller's flags) is the fix.
 */
export class GitSourceNotAllowedError extends GitError {
  override readonly name = 'GitSourceNotAllowedError';
  readonly code = 'GIT_SOURCE_NOT_ALLOWED';
  readonly reason = 'SourceNotAllowed';
  readonly intent = 'stalled';
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`source ${url} is not allowed: ${detail}`, url, options);
  }
}

/**
 * The credentials may not be sent where the fetch would send them: the URL's host is not among the hosts
 * their Secret names (`applyset.dev/source-hosts`), the Secret names none while the controller requires it,
 * or a request carrying them was redirected to another origin. No request carried them there.
 */
export class GitCredentialsNotForHostError extends GitError {
  override readonly name = 'GitCredentialsNotForHostError';
  readonly code = 'GIT_CREDENTIALS_NOT_FOR_HOST';
  readonly reason = 'CredentialsNotForHost';
  readonly intent = 'stalled';
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`credentials not sent to ${url}: ${detail}`, url, options);
  }
}

/** `path` in the source spec names nothing in the commit (or a submodule, whose files are elsewhere). */
export class GitPathNotFoundError extends IntentError {
  override readonly name = 'GitPathNotFoundError';
  readonly code = 'GIT_PATH_NOT_FOUND';
  readonly reason = 'PathNotFound';
  readonly intent = 'stalled';
  constructor(
    readonly path: string,
    readonly commit: string,
    /** `submodule`: the path is a gitlink; its files are in another repository, which is not fetched. */
    readonly found: 'nothing' | 'submodule' = 'nothing',
    options?: { cause?: unknown },
  ) {
    super(`path ${JSON.stringify(path)} ${pathNotFoundDetail(found)} in commit ${commit}`, options);
  }

  /** At the load, the path as the spec gives it and the revision, as the status names them. */
  override describe(at: FailureStep | undefined): string {
    if (at?.step !== 'load') return this.message;
    return `path "${at.path}" ${pathNotFoundDetail(this.found)} in revision ${at.revision}`;
  }
}

function pathNotFoundDetail(found: 'nothing' | 'submodule'): string {
  return found === 'submodule' ? 'is a submodule' : 'does not exist';
}

/**
 * A tree the repository's own git would refuse to check out (duplicate, empty, `.`, `..`, `.git` or
 * `/`-holding names, an unknown mode, an entry whose object has another type), or a symbolic link whose
 * target leaves the tree, loops or names nothing: a crafted repository, refused as a whole.
 */
export class GitUnsafeTreeError extends IntentError {
  override readonly name = 'GitUnsafeTreeError';
  readonly code = 'GIT_UNSAFE_TREE';
  readonly reason = 'UnsafeRepository';
  readonly intent = 'stalled';
  constructor(
    /** The entry's path from the repository root, '/'-separated. */
    readonly entryPath: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`unsafe repository: entry ${JSON.stringify(entryPath)} ${detail}`, options);
  }
}

/**
 * The repository is over a limit of the controller (an object's size, a fetch's bytes or objects, see
 * git-fetch-limits.ts): refused before it was inflated or kept, so it costs the controller nothing more.
 * Stalled until the source changes: fetching the same commit again would be refused again.
 */
export class GitRepositoryTooLargeError extends GitError {
  override readonly name = 'GitRepositoryTooLargeError';
  readonly code = 'GIT_REPOSITORY_TOO_LARGE';
  readonly reason = 'RepositoryTooLarge';
  readonly intent = 'stalled';
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`${url} is over a limit of the controller: ${detail}`, url, options);
  }
}

export type GitSourceError =
  | GitAuthError
  | GitUnreachableError
  | GitRefNotFoundError
  | GitRepositoryNotFoundError
  | GitFetchError
  | GitSourceNotAllowedError
  | GitCredentialsNotForHostError
  | GitRepositoryTooLargeError
  | GitSshAuthError
  | GitHostKeyMismatchError;

export function isGitSourceError(error: unknown): error is GitSourceError {
  return error instanceof GitError;
}
