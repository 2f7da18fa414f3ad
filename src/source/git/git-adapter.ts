/**
 * Git as a source type: spec.source.url a Git repository, its ref fetched into the shared cache
 * (src/git/git-source.ts: the outbound door, the bounds, the locks) and the commit read as the
 * revision's tree.
 */
import type { FoundSecret } from '../../kube/applyset-api.js';
import type { ResolvedSourceRef } from '../../api/applyset-types.js';
import { GitUnreachableError } from '../../git/git-error.js';
import type { GitRef } from '../../git/git-ref.js';
import type { GitSource } from '../../git/git-source.js';
import { GitHubAppUnreachableError } from '../../github-app/github-app-error.js';
import { githubAppOf } from '../../github-app/github-app-secret.js';
import { parseSourceHostList, SOURCE_HOSTS_ANNOTATION } from '../../net/host-list.js';
import { failureOutcome } from '../../reconcile/failure-outcome.js';
import type { SourceAdapter } from '../source-adapter.js';
import { readSourceConnection } from '../source-connection.js';
import { tlsMaterialOf } from '../tls-material-of.js';
import type { TlsMaterial } from '../../net/outbound-tls.js';
import { commitReader } from './commit-reader.js';
import {
  defaultGitHubAppSettings,
  forgetRefusedToken,
  resolveGitAuth,
  type GitCredentials,
  type GitHubAppSettings,
} from './github-app-auth.js';

export function gitAdapter(
  gitSource: GitSource,
  githubApps: GitHubAppSettings = defaultGitHubAppSettings(),
): SourceAdapter {
  return {
    read: async (request, signal) => {
      const { spec, metrics, log } = request;
      const auth = await request.credentials(gitSecretOf);
      if ('done' in auth) return auth;
      const connection = await readSourceConnection(request, signal);
      if ('done' in connection) return connection;
      const started = request.now();
      let fetched;
      try {
        const gitAuth =
          auth.value?.auth === undefined
            ? undefined
            : await resolveGitAuth(auth.value.auth, githubApps, signal);
        fetched = await gitSource.fetch(
          {
            url: spec.source.url,
            ref: gitRefOf(spec.source.ref),
            ...(gitAuth === undefined ? {} : { auth: gitAuth }),
            ...(auth.value?.tls === undefined ? {} : { tls: auth.value.tls }),
            // certSecretRef's material, when named, over the credentials Secret's (as Flux has it).
            ...connection.value,
          },
          { signal, timeoutMs: spec.timeoutMs, maxAgeMs: request.maxAgeMs },
        );
        metrics.observeGitFetch('success', (request.now() - started) / 1000);
      } catch (error) {
        metrics.observeGitFetch('failure', (request.now() - started) / 1000);
        forgetRefusedToken(auth.value?.auth, githubApps, error);
        // The status says only "unreachable or not a Git repository" (no port scan through it); the
        // operator reads here what it was.
        if (error instanceof GitUnreachableError || error instanceof GitHubAppUnreachableError) {
          log.warn({ detail: error.detail }, error.message);
        }
        return { done: failureOutcome(error, { step: 'fetch', spec }, log) };
      }
      const { revision, commit } = fetched;
      log.debug({ revision, fetched: fetched.fetched }, 'fetched');
      return {
        value: { revision, id: commit, tree: commitReader(gitSource, { url: spec.source.url, commit }) },
      };
    },
  };
}

/**
/**
 * What a Git credentials Secret holds: credentials (gitAuthOf), TLS material (`ca.crt`, `tls.crt`,
 * `tls.key`), or both; a Secret with only TLS material is for a server that needs no credentials.
 */
function gitSecretOf(
  secret: FoundSecret,
  from: string,
): { credentials: { auth?: GitCredentials; tls?: TlsMaterial } } | { problem: string } {
  const material = tlsMaterialOf(secret.data);
  if ('problem' in material) return material;
  const tls = material.tls === undefined ? {} : { tls: material.tls };
  const auth = gitAuthOf(secret, from);
  if ('problem' in auth) return material.tls === undefined ? auth : { credentials: tls };
  return { credentials: { auth: auth.credentials, ...tls } };
}

/**
 * The credentials a Git credentials Secret holds: a GitHub App, an SSH key (`identity`, with
 * `known_hosts`, and its passphrase in `password` when it is encrypted, as Flux's Secrets have them), a
 * token, or a username and password.
 */
function gitAuthOf(
  { data, annotations }: FoundSecret,
  from: string,
): { credentials: GitCredentials } | { problem: string } {
  // Which hosts the credentials are for; the Git source refuses to send them anywhere else.
  const hostList = annotations[SOURCE_HOSTS_ANNOTATION];
  const scope = {
    from,
    ...(hostList === undefined ? {} : { hosts: parseSourceHostList(hostList) }),
  };
  const githubApp = githubAppOf(data, from);
  if (githubApp !== undefined) {
    return 'problem' in githubApp ? githubApp : { credentials: { githubApp: githubApp.app, ...scope } };
  }
  const identity = data['identity'];
  if (identity !== undefined && identity !== '') {
    const knownHosts = data['known_hosts'];
    if (knownHosts === undefined || knownHosts.trim() === '') {
      return { problem: 'has an identity but no known_hosts (the SSH host key is always checked)' };
    }
    const passphrase = data['password'];
    return {
      credentials: { identity, knownHosts, ...(passphrase === undefined ? {} : { passphrase }), ...scope },
    };
  }
  const token = data['token'];
  if (token !== undefined && token !== '') return { credentials: { token, ...scope } };
  const username = data['username'];
  const password = data['password'];
  if (username !== undefined && password !== undefined) {
    return { credentials: { username, password, ...scope } };
  }
  return { problem: 'has neither identity and known_hosts, nor token, nor username and password' };
}

function gitRefOf(ref: ResolvedSourceRef): GitRef {
  switch (ref.type) {
    case 'digest':
      // The resolver gives a digest to oci:// sources only, and those are never fetched as Git.
      throw new Error(`a Git source has no digest ref (${ref.digest})`);
    case 'semver':
      // The same: a semver range of tags is an oci:// source's alone.
      throw new Error(`a Git source has no semver ref (${ref.range})`);
    case 'branch':
      return { branch: ref.name };
    case 'tag':
      return { tag: ref.name };
    case 'commit':
      return { commit: ref.sha };
  }
}
