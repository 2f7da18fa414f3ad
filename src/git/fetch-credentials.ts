import type { SshAccess } from '../net/ssh-session.js';
import { GitSshAuthError } from './git-error.js';
import type { BasicCredentials, RepositoryUrl } from './parse-repository-url.js';

/** What a fetch authenticates with: HTTP basic credentials, or an SSH key and the host keys to accept. */
export type FetchCredentials = BasicCredentials | SshAccess;

/** A Git credentials Secret's content, as the source adapter reads it (see GitAuth). */
type SecretCredentials = BasicCredentials | { readonly token: string } | SshAccess;

/**
 * The credentials a fetch of `repository` uses: the Secret's (a token is sent as HTTP basic with username
 * `git`), else those in an http(s) URL's userinfo. An ssh:// source needs a Secret with a key and
 * known_hosts (its host key is always checked), and an SSH key is no use to an http(s) source: both are
 * refused before anything is sent.
 */
export function fetchCredentialsOf(
  repository: RepositoryUrl,
  auth: (SecretCredentials & { readonly from?: string | undefined }) | undefined,
): FetchCredentials | undefined {
  const ssh = auth !== undefined && 'identity' in auth;
  if (repository.ssh !== undefined && !ssh) {
    throw new GitSshAuthError(
      repository.url,
      auth === undefined
        ? 'an ssh source needs spec.source.secretRef: a Secret with identity and known_hosts'
        : `${auth.from ?? 'the Secret'} has no identity (an SSH private key) and known_hosts`,
    );
  }
  if (repository.ssh === undefined && ssh) {
    throw new GitSshAuthError(
      repository.url,
      `${auth.from ?? 'the Secret'} holds an SSH key, which only an ssh:// or git@host:path URL uses`,
    );
  }
  if (auth === undefined) return repository.credentials;
  if ('identity' in auth) {
    return { identity: auth.identity, knownHosts: auth.knownHosts, passphrase: auth.passphrase };
  }
  if ('token' in auth) return { username: 'git', password: auth.token };
  return { username: auth.username, password: auth.password };
}

/** The HTTP basic credentials among them, for isomorphic-git's onAuth. */
export function basicCredentialsOf(credentials: FetchCredentials | undefined): BasicCredentials | undefined {
  return credentials === undefined || 'identity' in credentials ? undefined : credentials;
}
