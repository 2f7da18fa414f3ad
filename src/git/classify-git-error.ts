import { messageOf } from '../errors/message-of.js';
import {
  GitAuthError,
  GitFetchError,
  GitHostKeyMismatchError,
  GitRepositoryNotFoundError,
  GitSshAuthError,
  GitRefNotFoundError,
  GitSourceNotAllowedError,
  GitUnreachableError,
  isGitSourceError,
  type GitSourceError,
} from './git-error.js';
import { SourceAddressRefusedError } from '../net/guarded-lookup.js';
import { SshAuthRefusedError, SshCommandError, SshHostKeyError } from '../net/ssh-errors.js';
import { ProxyRefusedError } from '../net/proxy-refused-error.js';
import { tlsFailureOf, type TlsCertificateError } from '../net/tls-certificate-error.js';

/**
 * Node's own error codes (system calls, DNS, TLS, the HTTP parser: `ECONNREFUSED`, `EPROTO`,
 * `CERT_HAS_EXPIRED`, `HPE_INVALID_CONSTANT` …) are upper case; isomorphic-git's are class names.
 */
const NODE_ERROR_CODE = /^[A-Z][A-Z0-9_]*$/;

export interface GitErrorContext {
  /** The repository URL without credentials. */
  readonly url: string;
  /** `branch main` etc., for GitRefNotFoundError. */
  readonly ref: string;
  /** The ref we asked the remote for, to tell "ref missing on the remote" from "object missing locally". */
  readonly remoteRef: string;
}

/**
 * Maps what isomorphic-git and Node throw to our errors with intent. Abort errors are not passed here:
 * the caller rethrows the signal's reason itself.
 */
export function classifyGitError(
  error: unknown,
  context: GitErrorContext,
): GitSourceError | TlsCertificateError | ProxyRefusedError {
  if (isGitSourceError(error) || error instanceof ProxyRefusedError) return error;
  const { url } = context;
  // Raised by the socket's lookup, before a connection to the refused address was made.
  if (error instanceof SourceAddressRefusedError) {
    return new GitSourceNotAllowedError(url, error.message, { cause: error });
  }
  const ssh = classifySshError(error, url);
  if (ssh !== undefined) return ssh;
  const code = errorProperty(error, 'code');
  if (code === 'HttpError') {
    const statusCode = Number(errorProperty(errorProperty(error, 'data'), 'statusCode'));
    if (statusCode === 401 || statusCode === 403) return new GitAuthError(url, statusCode, { cause: error });
    return new GitUnreachableError(url, `HTTP ${statusCode}`, { cause: error });
  }
  if (code === 'NotFoundError' && errorProperty(errorProperty(error, 'data'), 'what') === context.remoteRef) {
    return new GitRefNotFoundError(url, context.ref, { cause: error });
  }
  if (code === 'SmartHttpError') {
    // Its message quotes the answer's body: not kept as the detail.
    return new GitUnreachableError(url, 'the server does not speak the smart HTTP protocol', {
      cause: error,
    });
  }
  // A certificate's failure says which and why: the tenant fixes it in a Secret (docs/tls-and-proxies.md).
  const tls = tlsFailureOf(error, new URL(url).host);
  if (tls !== undefined) return tls;
  if (typeof code === 'string' && NODE_ERROR_CODE.test(code)) {
    return new GitUnreachableError(url, code, { cause: error });
  }
  // simple-get's own socket timeout carries no code.
  if (error instanceof Error && error.message === 'Request timed out') {
    return new GitUnreachableError(url, 'request timed out', { cause: error });
  }
  const detail = messageOf(error);
  return new GitFetchError(url, detail, { cause: error });
}

/**
 * An SSH session's failure: the host key, the key, or upload-pack's own answer (git's servers and the
 * forges say "does not appear to be a git repository" or "not found" for a repository they will not
 * show this key). Undefined for anything else.
 */
function classifySshError(error: unknown, url: string): GitSourceError | undefined {
  if (error instanceof SshHostKeyError) {
    const host = error.port === 22 ? error.host : `[${error.host}]:${error.port}`;
    return new GitHostKeyMismatchError(url, host, error.fingerprint, error.keyType, { cause: error });
  }
  if (error instanceof SshAuthRefusedError) {
    const detail =
      error.unreadable === undefined ? `the server refused the key for ${error.username}` : error.message;
    return new GitSshAuthError(url, detail, { cause: error });
  }
  if (error instanceof SshCommandError) {
    if (/not appear to be a git repository|not found|no such/i.test(error.stderr)) {
      return new GitRepositoryNotFoundError(url, 'the SSH server has no such repository for this key', {
        cause: error,
      });
    }
    return new GitUnreachableError(url, error.message, { cause: error });
  }
  // ssh2's own failures (a handshake that timed out, a protocol error) carry the stage as `level`.
  const level = errorProperty(error, 'level');
  // A socket's error (`ECONNREFUSED`) keeps its code, as over HTTP.
  if (typeof level === 'string' && typeof errorProperty(error, 'code') !== 'string')
    return new GitUnreachableError(url, `ssh ${level}: ${messageOf(error)}`, { cause: error });
  return undefined;
}

function errorProperty(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
