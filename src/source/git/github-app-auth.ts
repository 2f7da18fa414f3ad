/**
 * A GitHub App as a Git source's credentials (docs/git-sources.md, "GitHub Apps"): the Secret's app is
 * turned into an installation token before the fetch, and the token sent as GitHub takes it over HTTPS,
 * Basic with the username `x-access-token`. The API host gets what the Git host gets: it must be among
 * `--allowed-source-hosts` (the door's Git policy) and among the hosts of the Secret's
 * `applyset.dev/source-hosts`, since the app's JWT is a credential too.
 */
import { credentialsRefusal } from '../../git/credentials-refusal.js';
import { GitAuthError, GitCredentialsNotForHostError } from '../../git/git-error.js';
import type { GitAuth } from '../../git/git-source.js';
import type { GitHubApp } from '../../github-app/github-app-secret.js';
import { createInstallationTokens, type InstallationTokens } from '../../github-app/installation-tokens.js';
import { gitPolicy } from '../../net/destination-policy.js';
import type { ProxyEnvironment } from '../../net/proxy-environment.js';
import type { SourceHostList } from '../../net/host-list.js';

/** A GitHub App Secret, with the hosts it is for and where it came from, as GitAuth has them. */
interface GitHubAppAuth {
  readonly githubApp: GitHubApp;
  readonly hosts?: SourceHostList;
  readonly from?: string;
}

/** What a Git credentials Secret holds: credentials to send, or an app to ask for them. */
export type GitCredentials = GitAuth | GitHubAppAuth;

/** The token cache and the host policy its API calls go under. */
export interface GitHubAppSettings {
  readonly tokens: InstallationTokens;
  /** `--allowed-source-hosts`. */
  readonly allowedHosts: SourceHostList;
  /** `--require-secret-source-hosts`. */
  readonly requireCredentialHosts: boolean;
  /** The operator's HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as for the Git server itself. */
  readonly proxies?: ProxyEnvironment | undefined;
}

/** A cache of its own, any host: for a Git source made without the controller's settings (tests). */
export function defaultGitHubAppSettings(): GitHubAppSettings {
  return { tokens: createInstallationTokens(), allowedHosts: [], requireCredentialHosts: false };
}

/** The GitAuth to fetch with: credentials as they are, an app as an installation token. */
export async function resolveGitAuth(
  credentials: GitCredentials,
  settings: GitHubAppSettings,
  signal: AbortSignal,
): Promise<GitAuth> {
  if (!('githubApp' in credentials)) return credentials;
  const { githubApp: app, hosts, from } = credentials;
  const refusal = credentialsRefusal(app.baseUrl, hosts, settings.requireCredentialHosts);
  if (refusal !== undefined) {
    throw new GitCredentialsNotForHostError(app.baseUrl, `${from ?? 'they'} ${refusal}`);
  }
  const { token, identity } = await settings.tokens.tokenFor(
    app,
    gitPolicy(settings.allowedHosts, settings.proxies),
    signal,
  );
  return {
    username: 'x-access-token',
    password: token,
    accessIdentity: identity,
    ...(hosts === undefined ? {} : { hosts }),
    ...(from === undefined ? {} : { from }),
  };
}

/** After the fetch failed: a token the Git server refused is not used again (revoked, or access changed). */
export function forgetRefusedToken(
  credentials: GitCredentials | undefined,
  settings: GitHubAppSettings,
  error: unknown,
): void {
  if (credentials === undefined || !('githubApp' in credentials) || !(error instanceof GitAuthError)) return;
  settings.tokens.forget(credentials.githubApp, gitPolicy(settings.allowedHosts, settings.proxies));
}
