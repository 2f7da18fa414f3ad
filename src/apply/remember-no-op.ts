/**
 * The memo of patches the server took without a change (a Secret's stringData, a PDB's selector): the
 * same patch on the same version of an object is not sent again. It lives as long as the controller,
 * so it is bounded, least recently used first, and holds digests of the patches, not the patches (a
 * server-side apply body may be hundreds of KB).
 */
import { createHash } from 'node:crypto';
import { LruMap } from '../kube/lru-map.js';

/** Per object key: whether this (version, patch) is one the server ignored before. */
export interface NoOpMemo {
  /** Whether `value` (resourceVersion, content type and body) is the one remembered for `key`. */
  has(key: string, value: string): boolean;
  remember(key: string, value: string): void;
  forget(key: string): void;
}

/** Enough for every object of a large fleet; an entry is a key and a 43-character digest. */
const MAX_REMEMBERED_NO_OPS = 100_000;

export function createNoOpMemo(maxEntries = MAX_REMEMBERED_NO_OPS): NoOpMemo {
  const digests = new LruMap<string, string>(maxEntries);
  const digestOf = (value: string) => createHash('sha256').update(value).digest('base64url');
  return {
    has: (key, value) => digests.get(key) === digestOf(value),
    remember: (key, value) => void digests.set(key, digestOf(value)),
    forget: (key) => void digests.delete(key),
  };
}

/**
 * One identity's part of a shared memo: the controller keeps one memo for every ServiceAccount it
 * acts as, and a patch one account had taken is not skipped for another, which must show it may write.
 */
export function noOpMemoFor(memo: NoOpMemo, identity: string): NoOpMemo {
  const scoped = (key: string) => `${identity}\n${key}`;
  return {
    has: (key, value) => memo.has(scoped(key), value),
    remember: (key, value) => memo.remember(scoped(key), value),
    forget: (key) => memo.forget(scoped(key)),
  };
}
