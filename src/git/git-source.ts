import { setMaxListeners } from 'node:events';
import type { LookupFunction } from 'node:net';
import type { ManifestLimits, ManifestFile } from '../manifests/manifest-limits.js';
import { raceSignal } from './abortable-http-client.js';
import {
  createAccessProofs,
  credentialIdentity,
  identityKey,
  MAX_ACCESS_PROOF_AGE_MS,
  withAccessProof,
  type AccessProofs,
  type Caller,
} from './access-proofs.js';
import { refuseDisallowedSource } from './credentials-refusal.js';
import { createFetchFlights } from './fetch-flights.js';
import { fetchIntoCache } from './git-fetch.js';
import { GitUnreachableError } from './git-error.js';
import {
  DEFAULT_GIT_CACHE_MAX_BYTES,
  DEFAULT_GIT_CACHE_MAX_REPOSITORY_BYTES,
  GitCacheBudget,
} from './git-cache-budget.js';
import { DEFAULT_GIT_FETCH_LIMITS, type GitFetchLimits } from './git-fetch-limits.js';
import { formatRevision, type GitRef } from './git-ref.js';
import { guardedLookup } from '../net/guarded-lookup.js';
import type { OutboundProxy } from '../net/outbound-proxy.js';
import { tlsMaterialIdentity, type TlsMaterial } from '../net/outbound-tls.js';
import type { ProxyEnvironment } from '../net/proxy-environment.js';
import { KeyedReadWriteLock } from './keyed-read-write-lock.js';
import { parseRepositoryUrl, type BasicCredentials, type RepositoryUrl } from './parse-repository-url.js';
import type { SshAccess } from '../net/ssh-session.js';
import { fetchCredentialsOf, type FetchCredentials } from './fetch-credentials.js';
import { fetchTransport } from './fetch-transport.js';
import { openCachedCommit, readCachedManifests, type CachedCommit } from './read-cached-manifests.js';
import { readUnderLock } from './read-under-lock.js';
import { repositoryCachePaths } from './repository-cache-paths.js';
import { RepositoryObjectCaches } from './repository-object-caches.js';
import type { SourceHostList } from '../net/host-list.js';

/**
 * Basic credentials, or a token. A token is sent as HTTP basic with username `git` and the token as
 * password, which GitHub, GitLab, Gitea and Bitbucket all accept for personal access tokens (the forge
 * ignores the username); it is what `git clone https://git:<token>@host/…` does.
 */
export type GitAuth = (BasicCredentials | { readonly token: string } | SshAccess) & {
  /**
   * The hosts these credentials may be sent to (their Secret's `applyset.dev/source-hosts`); undefined when
   * the Secret names none, which only `requireCredentialHosts` refuses.
   */
  readonly hosts?: SourceHostList;
  /** What they are, for messages: `Secret ns/name`. */
  readonly from?: string;
  /**
   * Names them when their password rotates (a GitHub App's token): else an HMAC of username and password.
   * (Not `identity`: that is an SSH key's field, which tells SSH access from the others.)
   */
  readonly accessIdentity?: string;
};

interface GitFetchRequest {
  /** `https://` or `http://`; credentials in the URL are used when `auth` is not given, never logged. */
  readonly url: string;
  readonly ref: GitRef;
  readonly auth?: GitAuth;
  /** A private CA, a client certificate: part of the caller's identity, as its credentials are. */
  readonly tls?: TlsMaterial;
  /** A tenant's proxy (spec.source.proxySecretRef); default the operator's (`proxies`). */
  readonly proxy?: OutboundProxy;
}

interface GitFetchOptions {
  readonly signal?: AbortSignal;
  /** Overrides the source's default for this call (an ApplySet's `spec.timeout`). */
  readonly timeoutMs?: number;
  /**
   * A fetch of the same URL, ref and credentials that finished less than this long ago is answered
   * again instead of fetching (an ApplySet polling on its interval), and a commit the cache holds is
   * served to credentials the server let read the repository less than this long ago; both at most
   * MAX_ACCESS_PROOF_AGE_MS. Default 0: always ask the server. A fetch still in flight is always
   * shared with callers of the same credentials, whatever this says.
   */
  readonly maxAgeMs?: number;
}

/** @internal test seam: the shape its tests build */
export interface FetchedCommit {
  /** `main@sha1:<sha>`, `v1@sha1:<sha>` or `sha1:<sha>` (Flux's format). */
  readonly revision: string;
  /** The resolved commit sha (an annotated tag is peeled to its commit). */
  readonly commit: string;
  /** False when the commit was already in the cache and the network was not used (commit refs). */
  readonly fetched: boolean;
}

interface GitReadRequest {
  /** The URL the commit was fetched from (it names the cache). */
  readonly url: string;
  /** A commit a fetch of `url` returned. */
  readonly commit: string;
  /** A directory (read recursively) or a file, relative to the repository root; default the root. */
  readonly path?: string;
}

interface GitReadOptions {
  readonly signal?: AbortSignal;
  /** Size limits; the defaults of `DEFAULT_MANIFEST_LIMITS` where not given. */
  readonly limits?: Partial<ManifestLimits>;
}

export interface GitSource {
  fetch(request: GitFetchRequest, options?: GitFetchOptions): Promise<FetchedCommit>;
  /**
   * The manifest files under `path` at `commit`, read from the cache's object store: nothing of the
   * repository is ever written to disk as files, so no name or link in it can reach outside it. Throws
   * GitInvalidPathError, GitPathNotFoundError or GitUnsafeTreeError (all stalled), or GitFetchError
   * (retryable) when the commit has left the cache since its fetch.
   */
  readManifests(request: GitReadRequest, options?: GitReadOptions): Promise<ManifestFile[]>;
  /**
   * Runs `use` on the commit's tree while no fetch can change the cache under it (the repository's read
   * lock, as readManifests holds it): for a reader of more than manifests, a Kustomize build's copy of
   * the tree. GitFetchError (retryable) when the commit has left the cache since its fetch.
   */
  readCommitTree<T>(
    request: Omit<GitReadRequest, 'path'>,
    use: (commit: CachedCommit) => Promise<T>,
    options?: Pick<GitReadOptions, 'signal'>,
  ): Promise<T>;
}

export interface GitSourceOptions {
  /** Holds one directory per repository URL; created when missing. */
  readonly cacheDir: string;
  /** Default deadline of one fetch, lock wait included. Default 60 s. */
  readonly timeoutMs?: number;
  /** isomorphic-git cannot repack: past this many pack files the cache starts over (depth 1). Default 50. */
  readonly maxPackFiles?: number;
  /** Hosts a source URL and its redirects may name (`--allowed-source-hosts`); empty or undefined: any. */
  readonly allowedHosts?: SourceHostList;
  /** Refuse credentials that do not say which hosts they are for (`--require-secret-source-hosts`). */
  readonly requireCredentialHosts?: boolean;
  /** The operator's HTTPS_PROXY, HTTP_PROXY and NO_PROXY, for every fetch without a proxy of its own. */
  readonly proxies?: ProxyEnvironment;
  /** Resolves host names at connect time; default guardedLookup over the system resolver and allowedHosts. */
  readonly lookup?: LookupFunction;
  /** The clock for the age of a finished fetch; default Date.now. */
  readonly now?: () => number;
  /** What one fetch may bring (object size, bytes, objects); DEFAULT_GIT_FETCH_LIMITS where not given. */
  readonly fetchLimits?: Partial<GitFetchLimits>;
  /** The cache's bytes on disk, all repositories together (`--git-cache-max-bytes`). Default 768 MiB. */
  readonly cacheMaxBytes?: number;
  /** One repository's bytes on disk, past which its next fetch starts it over. Default 256 MiB. */
  readonly cacheMaxRepositoryBytes?: number;
}

const DEFAULT_GIT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_PACK_FILES = 50;

/**
 * The controller's Git source: fetches a ref into a cache shared by every caller of the same repository
 * URL, shallow (depth 1) and for that one ref, so a reconcile only downloads what is new since the last
 * one. Manifests are read from the bare repository's objects, never from files written out of it.
 *
 * The cache is shared, the server's access control is not bypassed: a caller is answered only from a fetch
 * made with its own credentials (single flights are keyed by them), and a commit another caller put in
 * the cache is served only to credentials the server let read the repository within the caller's maxAgeMs
 * (at most MAX_ACCESS_PROOF_AGE_MS); otherwise the server is asked first, with a ref advertisement.
 *
 * Fetches of one URL run one at a time (isomorphic-git's writes to a repository are not safe to
 * interleave). A fetch that times out or is aborted rejects at once, but keeps the repository locked
 * until isomorphic-git has really stopped, which its HTTP client, bound to the same signal, makes quick;
 * the next fetch therefore never sees a half-written cache from a fetch still running. Reads take the
 * same lock for reading: they run together, between fetches, so a fetch that starts the cache over
 * never removes objects under a read, and share one object cache per repository.
 */
export function createGitSource(options: GitSourceOptions): GitSource {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const allowedHosts = options.allowedHosts ?? [];
  const lock = new KeyedReadWriteLock();
  const objectCaches = new RepositoryObjectCaches();
  /** How often each repository was removed from disk: part of the flight key. */
  const removals = new Map<string, number>();
  const budget = new GitCacheBudget({
    cacheDir: options.cacheDir,
    maxBytes: options.cacheMaxBytes ?? DEFAULT_GIT_CACHE_MAX_BYTES,
    maxRepositoryBytes: options.cacheMaxRepositoryBytes ?? DEFAULT_GIT_CACHE_MAX_REPOSITORY_BYTES,
    lock,
    onRemoved: (key) => {
      objectCaches.drop(key);
      // A finished fetch of a removed repository must not answer again: its commit is gone from disk.
      removals.set(key, (removals.get(key) ?? 0) + 1);
    },
  });
  const shared: SharedFetchContext = {
    budget,
    cacheDir: options.cacheDir,
    lock,
    objectCaches,
    lookup: options.lookup ?? guardedLookup(undefined, allowedHosts),
    allowedHosts,
    proxies: options.proxies,
    maxPackFiles: options.maxPackFiles ?? DEFAULT_MAX_PACK_FILES,
    proofs: createAccessProofs(options.now ?? Date.now),
    limits: { ...DEFAULT_GIT_FETCH_LIMITS, ...options.fetchLimits },
  };
  const flights = createFetchFlights<FetchedCommit>(options.now ?? Date.now);
  const identityOf = credentialIdentity(identityKey());
  const cacheOf = (url: string) => {
    const repository = parseRepositoryUrl(url);
    return { ...repository, gitdir: repositoryCachePaths(options.cacheDir, repository.cacheKey).gitdir };
  };

  return {
    async fetch(request, fetchOptions = {}) {
      const repository = parseRepositoryUrl(request.url);
      refuseDisallowedSource(repository, request.auth, allowedHosts, options.requireCredentialHosts === true);
      const callerSignal = fetchOptions.signal;
      callerSignal?.throwIfAborted();
      const credentials = fetchCredentialsOf(repository, request.auth);
      const caller = callerOf(request, credentials, identityOf(credentials), fetchOptions.maxAgeMs);
      // Credentials are part of the key: a caller never gets an answer fetched with another's.
      // A repository removed from disk counts in the key: a finished fetch of it must not answer again.
      const key = [
        repository.cacheKey,
        removals.get(repository.cacheKey) ?? 0,
        JSON.stringify(request.ref),
        caller.identity,
      ].join('\n');
      const result = flights.join(key, caller.windowMs, () =>
        fetchShared(shared, { ...request, repository }, caller, fetchOptions.timeoutMs ?? timeoutMs),
      );
      if (callerSignal === undefined) return result;
      try {
        return await raceSignal(result, callerSignal);
      } catch (error) {
        if (callerSignal.aborted) throw callerSignal.reason;
        throw error;
      }
    },

    readManifests: (request, readOptions = {}) =>
      readUnderLock(shared, cacheOf(request.url), readOptions.signal, (opened) =>
        readCachedManifests({
          ...opened,
          commit: request.commit,
          path: request.path,
          ...(readOptions.limits === undefined ? {} : { limits: readOptions.limits }),
        }),
      ),

    readCommitTree: (request, use, readOptions = {}) =>
      readUnderLock(shared, cacheOf(request.url), readOptions.signal, async (opened) =>
        use(await openCachedCommit({ ...opened, commit: request.commit })),
      ),
  };
}

/**
 * Who asks: the credentials' identity (an app's own, stable across its tokens), with the TLS material
 * and a tenant's proxy: a fetch through another CA or proxy is not another caller's answer.
 */
function callerOf(
  request: GitFetchRequest,
  credentials: FetchCredentials | undefined,
  credentialsIdentity: string,
  maxAgeMs: number | undefined,
): Caller {
  return {
    credentials,
    identity:
      (request.auth?.accessIdentity ?? credentialsIdentity) +
      tlsMaterialIdentity(request.tls) +
      (request.proxy?.url.href ?? ''),
    windowMs: Math.min(maxAgeMs ?? 0, MAX_ACCESS_PROOF_AGE_MS),
  };
}

/** What a shared fetch needs of its source: the cache, the repository locks, the network policy. */
interface SharedFetchContext {
  readonly cacheDir: string;
  readonly budget: GitCacheBudget;
  readonly lock: KeyedReadWriteLock;
  readonly objectCaches: RepositoryObjectCaches;
  readonly lookup: LookupFunction;
  readonly allowedHosts: SourceHostList;
  readonly proxies: ProxyEnvironment | undefined;
  readonly maxPackFiles: number;
  readonly proofs: AccessProofs;
  readonly limits: GitFetchLimits;
}

/**
 * The one fetch every caller of a flight waits for. Its deadline is its own (the first caller's
 * timeout), not a caller's signal: a caller that gives up must not abort the others' fetch.
 */
async function fetchShared(
  context: SharedFetchContext,
  { repository, ref, tls, proxy }: GitFetchRequest & { repository: RepositoryUrl },
  caller: Caller,
  deadlineMs: number,
): Promise<FetchedCommit> {
  const { cacheDir, lock, objectCaches, lookup, allowedHosts, limits, budget } = context;
  // A fetch over a limit is stopped like one out of time: its requests are bound to this signal.
  const overLimit = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(deadlineMs), overLimit.signal]);
  // isomorphic-git's HTTP requests each listen on it while a fetch runs.
  setMaxListeners(0, signal);
  const { gitdir } = repositoryCachePaths(cacheDir, repository.cacheKey);
  const transport = fetchTransport({
    ...{ repository, credentials: caller.credentials, signal, allowedHosts, lookup, limits },
    ...{ tls, proxy, proxies: context.proxies },
    overLimit: (refusal) => overLimit.abort(refusal),
  });
  const { http, remoteUrl } = transport;
  const work = lock
    .run(repository.cacheKey, 'write', async () => {
      // The fetch may start the cache over: packs cached for the reads before it may be gone after it.
      objectCaches.drop(repository.cacheKey);
      await budget.beforeFetch(repository.cacheKey);
      try {
        return await withAccessProof(context.proofs, repository.cacheKey, caller, (accessProven) =>
          fetchIntoCache({
            ...{ url: repository.url, remoteUrl, ref, credentials: caller.credentials, gitdir, signal, http },
            ...{ maxPackFiles: context.maxPackFiles, limits, accessProven },
          }),
        );
      } finally {
        await budget.afterFetch(repository.cacheKey);
      }
    })
    .finally(() => transport.close())
    .then(async (resolved) => {
      // Outside the lock: evicting takes other repositories' write locks.
      await budget.evict(repository.cacheKey);
      return {
        revision: formatRevision(ref, resolved.commit),
        commit: resolved.commit,
        fetched: resolved.fetched,
      };
    });
  try {
    return await raceSignal(work, signal);
  } catch (error) {
    if (overLimit.signal.aborted) throw overLimit.signal.reason;
    if (signal.aborted) {
      throw new GitUnreachableError(repository.url, `no answer within ${deadlineMs} ms`, { cause: error });
    }
    throw error;
  }
}
