/**
 * What one fetch may bring into the Git cache. A tenant's repository is hostile input: a file of zeros
 * packs a thousandfold (1 GiB in 1 MB), and every object of a received pack is inflated whole, in
 * memory, to index it, so each entry's declared size is checked before it is inflated (see scanPack).
 * The object and object-count defaults are far above what the manifest limits let
 * a repository of manifests apply; the fetch's bytes are bounded by memory: isomorphic-git holds a pack
 * 3 to 4 times over while it fetches, and one fetch of 48 MiB keeps the controller under the chart's
 * 512 MiB (docs/git-bounds.md#1-the-bounds).
 */
export interface GitFetchLimits {
  /** The largest object, inflated (`--git-max-object-bytes`). */
  readonly maxObjectBytes: number;
  /** The bytes of the server's answers to one fetch, the pack included (`--git-max-fetch-bytes`). */
  readonly maxFetchBytes: number;
  /** The objects of one received pack (`--git-max-fetch-objects`). */
  readonly maxFetchObjects: number;
}

export const DEFAULT_GIT_FETCH_LIMITS: GitFetchLimits = {
  maxObjectBytes: 16 * 1024 * 1024,
  maxFetchBytes: 48 * 1024 * 1024,
  maxFetchObjects: 50_000,
};

/** The controller flag that sets each limit, for messages: the reader of a status knows what to change. */
const GIT_FETCH_LIMIT_FLAGS: Readonly<Record<keyof GitFetchLimits, string>> = {
  maxObjectBytes: '--git-max-object-bytes',
  maxFetchBytes: '--git-max-fetch-bytes',
  maxFetchObjects: '--git-max-fetch-objects',
};

/** `limit (flag)`, e.g. `16777216 bytes (--git-max-object-bytes)`. */
export function describeLimit(limits: GitFetchLimits, which: keyof GitFetchLimits): string {
  const unit = which === 'maxFetchObjects' ? 'objects' : 'bytes';
  return `${limits[which]} ${unit} (${GIT_FETCH_LIMIT_FLAGS[which]})`;
}
