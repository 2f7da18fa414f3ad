import git, { type HttpClient } from 'isomorphic-git';
import { gitFs as fs } from './git-fs.js';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { classifyGitError } from './classify-git-error.js';
import { GitFetchError, GitRefNotFoundError } from './git-error.js';
import type { GitFetchLimits } from './git-fetch-limits.js';
import { PackIndexedHere, packReceivingFs } from './pack-receiving-fs.js';
import { COMMIT_SHA_PATTERN, describeGitRef, type GitRef } from './git-ref.js';
import { hasErrorCode } from './has-error-code.js';
import { basicCredentialsOf, type FetchCredentials } from './fetch-credentials.js';

/** How deep git's `--unshallow` asks for (its INFINITE_DEPTH). */
const UNSHALLOW_DEPTH = 0x7fffffff;

export interface CacheFetchInput {
  readonly url: string;
  /** The URL isomorphic-git is given (an ssh:// source's only names the requests `http` answers). */
  readonly remoteUrl: string;
  readonly ref: GitRef;
  readonly credentials: FetchCredentials | undefined;
  /** The cache's bare repository for `url`. */
  readonly gitdir: string;
  readonly signal: AbortSignal;
  /** Bound to `signal`; follows redirects under the source policy. */
  readonly http: HttpClient;
  /**
   * isomorphic-git cannot repack: every fetch adds a pack file. Past this many, the repository is
   * dropped and the fetch starts fresh (cheap with depth 1).
   */
  readonly maxPackFiles: number;
  /**
   * These credentials (or none) were let read the repository recently enough (see AccessProofs): a commit
   * the cache holds is answered without asking the server. Otherwise the server is asked first.
   */
  readonly accessProven: boolean;
  /** What a received pack may hold; checked before isomorphic-git writes or indexes it. */
  readonly limits: GitFetchLimits;
}

export interface ResolvedCommit {
  /** The commit `ref` names (an annotated tag is peeled to its commit). */
  readonly commit: string;
  /** False when the commit was already in the cache and the network was not used (commit refs). */
  readonly fetched: boolean;
  /** The server answered these credentials (a fetch or a ref advertisement): a new proof of access. */
  readonly askedServer: boolean;
}

/**
 * Fetches what `ref` needs into the bare repository at `gitdir`, shallow and for that one ref, and
 * returns the commit it names. The caller holds the repository's lock: isomorphic-git's writes to a
 * repository are not safe to interleave.
 */
export async function fetchIntoCache(input: CacheFetchInput): Promise<ResolvedCommit> {
  const { gitdir, signal } = input;
  signal.throwIfAborted();
  await dropIfTooManyPacks(gitdir, input.maxPackFiles);
  try {
    return await resolveIntoCache(input);
  } catch (error) {
    // An unexpected failure may come from a cache left inconsistent by a crash: start over once.
    if (!(error instanceof GitFetchError) || signal.aborted) throw error;
    await rm(gitdir, { recursive: true, force: true });
    return resolveIntoCache(input);
  }
}

/** What the isomorphic-git calls of one resolve share. */
interface FetchSession {
  readonly url: string;
  readonly gitdir: string;
  /** isomorphic-git's object cache, shared by the calls of this resolve only. */
  readonly cache: object;
  /** What one fetch may bring. */
  readonly limits: GitFetchLimits;
  /** The arguments every `git.fetch` of this resolve takes. */
  readonly common: Omit<Parameters<typeof git.fetch>[0], 'ref' | 'remoteRef'>;
  /** A library failure as our error; the caller's abort reason once the signal fired. */
  classify(error: unknown, remoteRef: string): Error;
}

async function resolveIntoCache(input: CacheFetchInput): Promise<ResolvedCommit> {
  const { url, ref, gitdir, signal, http, limits } = input;
  const credentials = basicCredentialsOf(input.credentials);
  await ensureRepository(gitdir, url);
  const cache = {};
  // The file system of its fetches: the received pack's limits checked (packReceivingFs).
  const fetchFs = packReceivingFs(url, limits, { index: false });
  const session: FetchSession = {
    url,
    gitdir,
    cache,
    limits,
    common: {
      fs: fetchFs,
      http,
      gitdir,
      url: input.remoteUrl,
      cache,
      onAuth: credentials === undefined ? undefined : () => ({ ...credentials }),
    },
    classify: (error, remoteRef) => {
      if (signal.aborted) return signal.reason as Error;
      return classifyGitError(error, { url, ref: describeGitRef(ref), remoteRef });
    },
  };
  return 'commit' in ref ? resolveCommit(session, ref, input.accessProven) : resolveBranchOrTag(session, ref);
}

/** A commit ref: the cache may already have it; else it is fetched by sha, else with all history. */
async function resolveCommit(
  session: FetchSession,
  ref: { readonly commit: string },
  accessProven: boolean,
): Promise<ResolvedCommit> {
  const { url, gitdir, cache, common, classify } = session;
  const sha = ref.commit;
  if (!COMMIT_SHA_PATTERN.test(sha)) {
    throw new GitRefNotFoundError(url, `${describeGitRef(ref)} (a full 40-character sha is required)`);
  }
  // A commit never changes: when the cache has it, the server is asked only whether these credentials
  // may read the repository (another caller's fetch may have put it there).
  if (await hasCommit(gitdir, sha, cache)) {
    if (accessProven) return { commit: sha, fetched: false, askedServer: false };
    await advertiseRefs(session, sha);
    return { commit: sha, fetched: false, askedServer: true };
  }
  try {
    // git's smart HTTP serves any commit reachable from a ref, so a shallow fetch of just it works there
    // and on the big forges.
    await fetchIndexed(session, {
      ...common,
      ref: sha,
      remoteRef: sha,
      singleBranch: true,
      depth: 1,
      tags: false,
    });
  } catch (error) {
    const classified = classify(error, sha);
    if (!(classified instanceof GitFetchError)) throw classified;
  }
  if (await hasCommit(gitdir, sha, cache)) return { commit: sha, fetched: true, askedServer: true };
  // A server that only serves advertised tips: fetch the whole history of every branch and tag.
  try {
    await fetchIndexed(session, {
      ...common,
      ref: 'HEAD',
      remoteRef: 'HEAD',
      depth: UNSHALLOW_DEPTH,
      tags: true,
    });
  } catch (error) {
    throw classify(error, 'HEAD');
  }
  if (await hasCommit(gitdir, sha, cache)) return { commit: sha, fetched: true, askedServer: true };
  throw new GitRefNotFoundError(url, describeGitRef(ref));
}

/** A branch or tag: its tip, fetched shallow on top of where the previous fetch left it. */
async function resolveBranchOrTag(
  session: FetchSession,
  ref: { readonly branch: string } | { readonly tag: string },
): Promise<ResolvedCommit> {
  const { url, gitdir, cache, common, classify } = session;
  // The local ref is where the previous fetch left this ref's tip: isomorphic-git offers it to the
  // server as a `have`, so only objects new since then come down.
  const remoteRef = 'branch' in ref ? `refs/heads/${ref.branch}` : `refs/tags/${ref.tag}`;
  const localRef = 'branch' in ref ? `refs/remotes/origin/${ref.branch}` : remoteRef;
  let fetchHead: string | null;
  try {
    const args = { ...common, ref: localRef, remoteRef, singleBranch: true, depth: 1 };
    // A branch's tip is the local ref the fetch wrote; a tag's is not always: isomorphic-git leaves a
    // tag it has already where it was, and only its FETCH_HEAD says where the tag is now.
    fetchHead =
      'branch' in ref
        ? await fetchIndexed(session, { ...args, tags: false }, localRef)
        : (await git.fetch({ ...args, tags: true })).fetchHead;
  } catch (error) {
    throw classify(error, remoteRef);
  }
  // An empty repository advertises no refs at all.
  if (fetchHead === null) throw new GitRefNotFoundError(url, describeGitRef(ref));
  try {
    // Peels an annotated tag to the commit it names.
    const { oid } = await git.readCommit({ fs, gitdir, oid: fetchHead, cache });
    return { commit: oid, fetched: true, askedServer: true };
  } catch (error) {
    throw classify(error, remoteRef);
  }
}

/**
 * `git.fetch` with the received pack indexed by the controller (packReceivingFs): once the pack and its
 * index are written, the library's refusal of the write, PackIndexedHere, is the fetch's success.
 * Resolves with the tip `localRef` (where the fetch wrote the remote's) now names, if given.
 */
async function fetchIndexed(
  session: FetchSession,
  args: Omit<Parameters<typeof git.fetch>[0], 'fs'>,
  localRef?: string,
): Promise<string | null> {
  try {
    return (await git.fetch({ ...args, fs: packReceivingFs(session.url, session.limits, { index: true }) }))
      .fetchHead;
  } catch (error) {
    if (!(error instanceof PackIndexedHere)) throw error;
    return localRef === undefined ? null : git.resolveRef({ fs, gitdir: session.gitdir, ref: localRef });
  }
}

/**
 * Asks the server for its refs (`GET info/refs?service=git-upload-pack`) with the session's credentials:
 * the cheapest request whose answer says whether they may read the repository. Refused as a fetch would be.
 */
async function advertiseRefs(session: FetchSession, sha: string): Promise<void> {
  const { http, onAuth, url } = session.common;
  try {
    await git.getRemoteInfo({ http, url: url ?? session.url, ...(onAuth === undefined ? {} : { onAuth }) });
  } catch (error) {
    throw session.classify(error, sha);
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
    if (hasErrorCode(error, 'NotFoundError')) return false;
    throw error;
  }
}

async function dropIfTooManyPacks(gitdir: string, maxPackFiles: number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(path.join(gitdir, 'objects', 'pack'));
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return;
    throw error;
  }
  if (names.filter((name) => name.endsWith('.pack')).length > maxPackFiles) {
    await rm(gitdir, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return false;
    throw error;
  }
}
