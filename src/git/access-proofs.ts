import { createHmac, randomBytes } from 'node:crypto';
import { LruMap } from '../kube/lru-map.js';
import type { FetchCredentials } from './fetch-credentials.js';
import {
  GitAuthError,
  GitRepositoryNotFoundError,
  GitSshAuthError,
  GitUnreachableError,
} from './git-error.js';

/**
 * The longest a caller's proof of access to a repository serves it from the shared cache: a credential
 * the server revokes stops being answered from the cache at most this long after.
 */
export const MAX_ACCESS_PROOF_AGE_MS = 5 * 60_000;

/**
 * When each (repository, credential identity) last had an answer from the Git server that let it read:
 * a fetch, or a ref advertisement asked with those credentials. The shared cache serves a revision only to
 * an identity with a proof young enough; another identity must ask the server itself.
 */
export interface AccessProofs {
  /** The server just let `identity` read `repository`. */
  record(repository: string, identity: string): void;
  /** The server refused `identity` (401, 403, 404): what it proved before no longer counts. */
  forget(repository: string, identity: string): void;
  /** Whether `identity` was let read `repository` less than `windowMs` ago. */
  provenWithin(repository: string, identity: string, windowMs: number): boolean;
}

export function createAccessProofs(now: () => number, maxEntries = 10_000): AccessProofs {
  const proofs = new LruMap<string, number>(maxEntries);
  const key = (repository: string, identity: string) => `${repository}\n${identity}`;
  return {
    record(repository, identity) {
      proofs.set(key(repository, identity), now());
    },
    forget(repository, identity) {
      proofs.delete(key(repository, identity));
    },
    provenWithin(repository, identity, windowMs) {
      const provenAt = proofs.get(key(repository, identity));
      return provenAt !== undefined && now() - provenAt < windowMs;
    },
  };
}

/**
 * Names credentials without holding them: an HMAC under a key drawn when the process starts, so two callers
 * with the same credentials share an identity (and their fetches), while neither a key in memory, a heap
 * dump nor a log line lets anyone test a guessed password against it. `anonymous` for none.
 */
export function credentialIdentity(key: Buffer): (credentials: FetchCredentials | undefined) => string {
  return (credentials) =>
    credentials === undefined
      ? 'anonymous'
      : createHmac('sha256', key)
          .update(JSON.stringify(identityParts(credentials)))
          .digest('hex');
}

/**
 * An SSH key is an identity of its own (two keys never share a proof of access), and so is what it
 * trusts: a proof made under one known_hosts does not serve a caller whose known_hosts says otherwise.
 */
function identityParts(credentials: FetchCredentials): readonly string[] {
  if ('identity' in credentials) {
    return ['ssh', credentials.identity, credentials.passphrase ?? '', credentials.knownHosts];
  }
  return [credentials.username, credentials.password];
}

/** A fresh HMAC key for credentialIdentity. */
export function identityKey(): Buffer {
  return randomBytes(32);
}

/** Who asks for a fetch: its credentials, their identity and how old a proof of its access may be. */
export interface Caller {
  readonly credentials: FetchCredentials | undefined;
  readonly identity: string;
  readonly windowMs: number;
}

/**
 * Runs `fetch` for `caller`, told whether the caller's credentials proved access to `repository` within
 * its window (then a commit the cache holds may be answered without the server). A fetch or ref
 * advertisement with them records a new proof; a refusal ends the old one, so a revoked token is not
 * answered from the cache.
 */
export async function withAccessProof<T extends { readonly askedServer: boolean }>(
  proofs: AccessProofs,
  repository: string,
  caller: Caller,
  fetch: (accessProven: boolean) => Promise<T>,
): Promise<T> {
  const accessProven = proofs.provenWithin(repository, caller.identity, caller.windowMs);
  let resolved: T;
  try {
    resolved = await fetch(accessProven);
  } catch (error) {
    if (isRefusal(error)) proofs.forget(repository, caller.identity);
    throw error;
  }
  if (resolved.askedServer) proofs.record(repository, caller.identity);
  return resolved;
}

/**
 * The server said no to these credentials: 401, 403, or 404 (how GitHub hides a repository from them);
 * over SSH, a refused key or a repository this key is not shown.
 */
function isRefusal(error: unknown): boolean {
  return (
    error instanceof GitAuthError ||
    error instanceof GitSshAuthError ||
    error instanceof GitRepositoryNotFoundError ||
    (error instanceof GitUnreachableError && error.detail === 'HTTP 404')
  );
}
