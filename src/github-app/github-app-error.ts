/**
 * What can go wrong turning a GitHub App's Secret into an installation token (docs/git-sources.md,
 * "GitHub Apps"): a key that is no RSA private key, a JWT GitHub does not accept and an installation it
 * does not know need a human (stalled); GitHub down, slow or answering nonsense is retried. Messages name
 * the Secret and the API base, never the key, the JWT or a token.
 */
import { IntentError } from '../errors/intent-error.js';

/** `githubAppPrivateKey` is no PEM RSA private key: nothing was sent. */
export class GitHubAppKeyInvalidError extends IntentError {
  override readonly name = 'GitHubAppKeyInvalidError';
  readonly code = 'GITHUB_APP_KEY_INVALID';
  readonly intent = 'stalled';
  readonly reason = 'GitHubAppKeyInvalid';
}

/**
 * GitHub answered 401 (or 403) to the app's JWT: the app id and the private key do not belong together
 * (a key of another app, a key revoked, a wrong `githubAppID`), or the installation is suspended.
 */
export class GitHubAppAuthFailedError extends IntentError {
  override readonly name = 'GitHubAppAuthFailedError';
  readonly code = 'GITHUB_APP_AUTH_FAILED';
  readonly intent = 'stalled';
  readonly reason = 'GitHubAppAuthFailed';
}

/** GitHub answered 404: the installation id is not one of this app's, or the app is not installed on the owner. */
export class GitHubAppInstallationNotFoundError extends IntentError {
  override readonly name = 'GitHubAppInstallationNotFoundError';
  readonly code = 'GITHUB_APP_INSTALLATION_NOT_FOUND';
  readonly intent = 'stalled';
  readonly reason = 'GitHubAppInstallationNotFound';
}

/**
 * No answer from GitHub's API in time, a refused or broken connection, 429, 5xx, or an answer that is
 * not GitHub's. One message for all, as GitUnreachableError has: `githubAppBaseURL` is the tenant's to
 * choose, and telling a closed port from a silent one or from another server would make the controller
 * a port scanner. `detail` says which, for the controller's log only.
 */
export class GitHubAppUnreachableError extends IntentError {
  override readonly name = 'GitHubAppUnreachableError';
  readonly code = 'GITHUB_APP_UNREACHABLE';
  readonly intent = 'retryable';
  readonly reason = 'GitHubAppUnreachable';
  constructor(
    baseUrl: string,
    /** What happened (`ECONNREFUSED`, `HTTP 502`, not JSON …): logged, never put in the status. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`GitHub API ${baseUrl} unreachable or not GitHub's API`, options);
  }
}
