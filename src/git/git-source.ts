import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import git, { type HttpClient } from 'isomorphic-git';
import fs from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import type { ManifestLimits } from '../manifests/manifest-limits.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import { abortableHttpClient, raceSignal } from './abortable-http-client.js';
import { classifyGitError } from './classify-git-error.js';
import { credentialsRefusal } from './credentials-refusal.js';
import { followRedirects } from './follow-redirects.js';
import {
  GitCredentialsNotForHostError,
  GitFetchError,
  GitRefNotFoundError,
  GitSourceNotAllowedError,
  GitUnreachableError,
} from './git-error.js';
import { COMMIT_SHA_PATTERN, describeGitRef, formatRevision, type GitRef } from './git-ref.js';
import { KeyedMutex } from './keyed-mutex.js';
import { parseRepositoryUrl, type BasicCredentials } from './parse-repository-url.js';
import { guardedLookup } from './guarded-lookup.js';
import { readTreeManifests, type GitObjectReader } from './read-tree-manifests.js';
import type { SourceHostList } from './source-host-list.js';
import { sourceUrlRefusal } from './source-url-refusal.js';

/**
 * Basic credentials, or a token. A token is sent as HTTP basic with username `git` and the token as
 * password, which GitHub, GitLab, Gitea and Bitbucket all accept for personal access tokens (the forge
 * ignores the username); it is what `git clone https://git:<token>@host/…` does.
 */
export type GitAuth = (BasicCredentials | { readonly token: string }) & {
  /**
   * The hosts these credentials may be sent to (their Secret's `applyset.dev/source-hosts`); undefined when
   * the Secret names none, which only `requireCredentialHosts` refuses.
   */
  readonly hosts?: SourceHostList;
  /** What they are, for messages: `Secret ns/name`. */
  readonly from?: string;
};

export interface GitFetchRequest {
  /** `https://` or `http://`; credentials in the URL are used when `auth` is not given, never logged. */
  readonly url: string;
  readonly ref: GitRef;
  readonly auth?: GitAuth;
}

export interface GitFetchOptions {
  readonly signal?: AbortSignal;
  /** Overrides the source's default for this call (an ApplySet's `spec.timeout`). */
  readonly timeoutMs?: number;
  /**
   * A fetch of the same URL, ref and credentials that finished less than this long ago is answered
   * again instead of fetching (an ApplySet polling on its interval). Default 0: always fetch. A fetch
   * still in flight is always shared, whatever this says.
   */
  readonly maxAgeMs?: number;
}

export interface FetchedCommit {
  /** `main@sha1:<sha>`, `v1@sha1:<sha>` or `sha1:<sha>` (Flux's format). */
  readonly revision: string;
  /** The resolved commit sha (an annotated tag is peeled to its commit). */
  readonly commit: string;
  /** False when the commit was already in the cache and the network was not used (commit refs). */
  readonly fetched: boolean;
}

export interface GitReadRequest {
  /** The URL the commit was fetched from (it names the cache). */
  readonly url: string;
  /** A commit a fetch of `url` returned. */
  readonly commit: string;
  /** A directory (read recursively) or a file, relative to the repository root; default the root. */
  readonly path?: string;
}

export interface GitReadOptions {
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
}

export interface GitSourceOptions {
  /** Holds one directory per repository URL; created when missing. */
  readonly cacheDir: string;
  /** Default deadline of one fetch, lock wait included. Default 60 s. */
  readonly timeoutMs?: number;
  /**
   * isomorphic-git cannot repack: every fetch adds a pack file. Past this many, the repository's cache is
   * dropped and the next fetch starts fresh (cheap with depth 1). Default 50.
   */
  readonly maxPackFiles?: number;
  /** Hosts a source URL and its redirects may name (`--allowed-source-hosts`); empty or undefined: any. */
  readonly allowedHosts?: SourceHostList;
  /** Refuse credentials that do not say which hosts they are for (`--require-secret-source-hosts`). */
  readonly requireCredentialHosts?: boolean;
  /** Resolves host names at connect time; default guardedLookup() over the system resolver. */
  readonly lookup?: LookupFunction;
  /** The clock for the age of a finished fetch; default Date.now. */
  readonly now?: () => number;
}

export const DEFAULT_GIT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_PACK_FILES = 50;

/** How deep git's `--unshallow` asks for (its INFINITE_DEPTH). */
const UNSHALLOW_DEPTH = 0x7fffffff;

export interface RepositoryCachePaths {
  /** Everything the cache holds for one repository URL. */
  readonly root: string;
  /** The bare repository that fetches go into. */
  readonly gitdir: string;
}

/** Where the cache of the repository with `cacheKey` (see parseRepositoryUrl) lives under `cacheDir`. */
export function repositoryCachePaths(cacheDir: string, cacheKey: string): RepositoryCachePaths {
  const root = path.join(cacheDir, cacheKey);
  return { root, gitdir: path.join(root, 'repo.git') };
}

/**
 * The controller's Git source: fetches a ref into a cache shared by every caller of the same repository
 * URL, shallow (depth 1) and for that one ref, so a reconcile only downloads what is new since the last
 * one. Manifests are read from the bare repository's objects, never from files written out of it.
 *
 * Fetches of one URL run one at a time (isomorphic-git's writes to a repository are not safe to
 * interleave). A fetch that times out or is aborted rejects at once, but keeps the repository locked
 * until isomorphic-git has really stopped, which its HTTP client, bound to the same signal, makes quick;
 * the next fetch therefore never sees a half-written cache from a fetch still running. Reads take the
 * same lock, so a fetch that starts the cache over never removes objects under a read.
 */
export function createGitSource(options: GitSourceOptions): GitSource {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const maxPackFiles = options.maxPackFiles ?? DEFAULT_MAX_PACK_FILES;
  const allowedHosts = options.allowedHosts ?? [];
  const lookup = options.lookup ?? guardedLookup();
  const mutex = new KeyedMutex();
  const now = options.now ?? Date.now;
  // Single flight: one fetch per (repository, ref, credentials) at a time, shared by every caller; a
  // finished one is kept so a caller that accepts its age gets its answer without a round trip.
  const flights = new Map<string, { readonly result: Promise<FetchedCommit>; settledAt?: number }>();

  return {
    async fetch(request, fetchOptions = {}) {
      const repository = parseRepositoryUrl(request.url);
      // Both refusals come before any request: nothing goes out, with or without the credentials.
      const sourceRefusal = sourceUrlRefusal(repository.url, allowedHosts);
      if (sourceRefusal !== undefined) throw new GitSourceNotAllowedError(repository.url, sourceRefusal);
      if (request.auth !== undefined) {
        const refusal = credentialsRefusal(
          repository.url,
          request.auth.hosts,
          options.requireCredentialHosts === true,
        );
        if (refusal !== undefined) {
          throw new GitCredentialsNotForHostError(
            repository.url,
            `${request.auth.from ?? 'they'} ${refusal}`,
          );
        }
      }
      const callerSignal = fetchOptions.signal;
      callerSignal?.throwIfAborted();
      const credentials = toBasicCredentials(request.auth) ?? repository.credentials;
      // Credentials are part of the key: a caller never gets an answer fetched with another's.
      const key = [repository.cacheKey, JSON.stringify(request.ref), credentialsKey(credentials)].join('\n');
      const previous = flights.get(key);
      const maxAgeMs = fetchOptions.maxAgeMs ?? 0;
      const reusable =
        previous !== undefined && (previous.settledAt === undefined || now() - previous.settledAt < maxAgeMs);
      let flight = reusable ? previous : undefined;
      if (flight === undefined) {
        const started = {
          result: fetchShared(repository, request.ref, credentials, fetchOptions.timeoutMs ?? timeoutMs),
        } as { readonly result: Promise<FetchedCommit>; settledAt?: number };
        flights.set(key, started);
        started.result.then(
          () => {
            started.settledAt = now();
          },
          () => {
            // A failure is never handed to a later caller: the next one fetches again.
            if (flights.get(key) === started) flights.delete(key);
          },
        );
        flight = started;
      }
      const result = flight.result;
      if (callerSignal === undefined) return result;
      try {
        return await raceSignal(result, callerSignal);
      } catch (error) {
        if (callerSignal.aborted) throw callerSignal.reason;
        throw error;
      }
    },

    async readManifests(request, readOptions = {}) {
      const { signal } = readOptions;
      signal?.throwIfAborted();
      const repository = parseRepositoryUrl(request.url);
      const { gitdir } = repositoryCachePaths(options.cacheDir, repository.cacheKey);
      const read = mutex.run(repository.cacheKey, async () => {
        const reader = objectStoreReader(gitdir);
        let tree: string;
        try {
          ({ tree } = (
            await git.readCommit({ fs, gitdir, oid: request.commit, cache: reader.cache })
          ).commit);
        } catch (error) {
          if (!isCode(error, 'NotFoundError')) throw error;
          throw new GitFetchError(repository.url, `commit ${request.commit} is no longer in the cache`, {
            cause: error,
          });
        }
        return readTreeManifests({
          reader,
          commit: request.commit,
          tree,
          sourcePath: request.path,
          ...(readOptions.limits === undefined ? {} : { limits: readOptions.limits }),
          ...(signal === undefined ? {} : { signal }),
        });
      });
      return signal === undefined ? read : raceSignal(read, signal);
    },
  };

  /**
   * The one fetch every caller of a flight waits for. Its deadline is its own (the first caller's
   * timeout), not a caller's signal: a caller that gives up must not abort the others' fetch.
   */
  async function fetchShared(
    repository: ReturnType<typeof parseRepositoryUrl>,
    ref: GitRef,
    credentials: BasicCredentials | undefined,
    deadlineMs: number,
  ): Promise<FetchedCommit> {
    const signal = AbortSignal.timeout(deadlineMs);
    // isomorphic-git's HTTP requests each listen on it while a fetch runs.
    setMaxListeners(0, signal);
    const paths = repositoryCachePaths(options.cacheDir, repository.cacheKey);
    const http = followRedirects(abortableHttpClient(signal, { lookup }), {
      repositoryUrl: repository.url,
      allowedHosts,
    });
    const work = mutex.run(repository.cacheKey, () =>
      fetchLocked({ url: repository.url, ref, credentials, paths, signal, http }),
    );
    try {
      return await raceSignal(work, signal);
    } catch (error) {
      if (signal.aborted) {
        throw new GitUnreachableError(repository.url, `no answer within ${deadlineMs} ms`, { cause: error });
      }
      throw error;
    }
  }

  async function fetchLocked(input: {
    url: string;
    ref: GitRef;
    credentials: BasicCredentials | undefined;
    paths: RepositoryCachePaths;
    signal: AbortSignal;
    http: HttpClient;
  }): Promise<FetchedCommit> {
    const { paths, signal } = input;
    signal.throwIfAborted();
    await dropIfTooManyPacks(paths.gitdir, maxPackFiles);
    let resolved: { commit: string; fetched: boolean };
    try {
      resolved = await resolveIntoCache(input);
    } catch (error) {
      // An unexpected failure may come from a cache left inconsistent by a crash: start over once.
      if (!(error instanceof GitFetchError) || signal.aborted) throw error;
      await rm(paths.gitdir, { recursive: true, force: true });
      resolved = await resolveIntoCache(input);
    }
    return {
      revision: formatRevision(input.ref, resolved.commit),
      commit: resolved.commit,
      fetched: resolved.fetched,
    };
  }
}

/** A digest of the credentials, so the flight key holds no secret. */
function credentialsKey(credentials: BasicCredentials | undefined): string {
  if (credentials === undefined) return 'anonymous';
  return createHash('sha256')
    .update(JSON.stringify([credentials.username, credentials.password]))
    .digest('hex');
}

interface ResolveInput {
  readonly url: string;
  readonly ref: GitRef;
  readonly credentials: BasicCredentials | undefined;
  readonly paths: RepositoryCachePaths;
  readonly signal: AbortSignal;
  /** Bound to `signal`; follows redirects under the source policy. */
  readonly http: HttpClient;
}

/** Fetches what `ref` needs into the bare repository and returns the commit it names. */
async function resolveIntoCache(input: ResolveInput): Promise<{ commit: string; fetched: boolean }> {
  const { url, ref, credentials, paths, signal, http } = input;
  await ensureRepository(paths.gitdir, url);
  const cache = {};
  const common = {
    fs,
    http,
    gitdir: paths.gitdir,
    url,
    cache,
    onAuth: credentials === undefined ? undefined : () => ({ ...credentials }),
  };
  const classify = (error: unknown, remoteRef: string) => {
    if (signal.aborted) return signal.reason as Error;
    return classifyGitError(error, { url, ref: describeGitRef(ref), remoteRef });
  };

  if ('commit' in ref) {
    const sha = ref.commit;
    if (!COMMIT_SHA_PATTERN.test(sha)) {
      throw new GitRefNotFoundError(url, `${describeGitRef(ref)} (a full 40-character sha is required)`);
    }
    // A commit never changes: when the cache has it, there is nothing to ask the server.
    if (await hasCommit(paths.gitdir, sha, cache)) return { commit: sha, fetched: false };
    try {
      // git's smart HTTP serves any commit reachable from a ref, so a shallow fetch of just it works there
      // and on the big forges.
      await git.fetch({ ...common, ref: sha, remoteRef: sha, singleBranch: true, depth: 1, tags: false });
    } catch (error) {
      const classified = classify(error, sha);
      if (!(classified instanceof GitFetchError)) throw classified;
    }
    if (await hasCommit(paths.gitdir, sha, cache)) return { commit: sha, fetched: true };
    // A server that only serves advertised tips: fetch the whole history of every branch and tag.
    try {
      await git.fetch({ ...common, ref: 'HEAD', remoteRef: 'HEAD', depth: UNSHALLOW_DEPTH, tags: true });
    } catch (error) {
      throw classify(error, 'HEAD');
    }
    if (await hasCommit(paths.gitdir, sha, cache)) return { commit: sha, fetched: true };
    throw new GitRefNotFoundError(url, describeGitRef(ref));
  }

  // The local ref is where the previous fetch left this ref's tip: isomorphic-git offers it to the
  // server as a `have`, so only objects new since then come down.
  const remoteRef = 'branch' in ref ? `refs/heads/${ref.branch}` : `refs/tags/${ref.tag}`;
  const localRef = 'branch' in ref ? `refs/remotes/origin/${ref.branch}` : remoteRef;
  let fetchHead: string | null;
  try {
    const result = await git.fetch({
      ...common,
      ref: localRef,
      remoteRef,
      singleBranch: true,
      depth: 1,
      tags: 'tag' in ref,
    });
    fetchHead = result.fetchHead;
  } catch (error) {
    throw classify(error, remoteRef);
  }
  // An empty repository advertises no refs at all.
  if (fetchHead === null) throw new GitRefNotFoundError(url, describeGitRef(ref));
  try {
    // Peels an annotated tag to the commit it names.
    const { oid } = await git.readCommit({ fs, gitdir: paths.gitdir, oid: fetchHead, cache });
    return { commit: oid, fetched: true };
  } catch (error) {
    throw classify(error, remoteRef);
  }
}

async function ensureRepository(gitdir: string, url: string): Promise<void> {
  if (await exists(path.join(gitdir, 'config'))) return;
  await rm(gitdir, { recursive: true, force: true });
  await mkdir(gitdir, { recursive: true });
  await git.init({ fs, gitdir, bare: true });
  // The remote is only there for its fetch refspec (where branch tips are kept between fetches).
  await git.addRemote({ fs, gitdir, remote: 'origin', url });
}

async function hasCommit(gitdir: string, sha: string, cache: object): Promise<boolean> {
  try {
    await git.readCommit({ fs, gitdir, oid: sha, cache });
    return true;
  } catch (error) {
    if (isCode(error, 'NotFoundError')) return false;
    throw error;
  }
}

/** Objects of the bare repository at `gitdir`, inflated by isomorphic-git, with one object cache per read. */
function objectStoreReader(gitdir: string): GitObjectReader & { readonly cache: object } {
  const cache = {};
  return {
    cache,
    read: async (oid) => {
      const object = await git.readObject({ fs, gitdir, oid, format: 'content', cache });
      return { type: object.type, content: object.object as Uint8Array };
    },
  };
}

async function dropIfTooManyPacks(gitdir: string, maxPackFiles: number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(path.join(gitdir, 'objects', 'pack'));
  } catch (error) {
    if (isCode(error, 'ENOENT')) return;
    throw error;
  }
  if (names.filter((name) => name.endsWith('.pack')).length > maxPackFiles) {
    await rm(gitdir, { recursive: true, force: true });
  }
}

function toBasicCredentials(auth: GitAuth | undefined): BasicCredentials | undefined {
  if (auth === undefined) return undefined;
  if ('token' in auth) return { username: 'git', password: auth.token };
  return { username: auth.username, password: auth.password };
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false;
    throw error;
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
