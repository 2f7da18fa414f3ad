/** The revision to follow: exactly one of a branch, a tag or a full commit sha (as the CRD requires). */
export type GitRef = { readonly branch: string } | { readonly tag: string } | { readonly commit: string };

/** A full, lowercase SHA-1: the only commit form we fetch, since a short sha is ambiguous on the wire. */
export const COMMIT_SHA_PATTERN = /^[0-9a-f]{40}$/;

/** `branch main`, `tag v1.0.0`, `commit 0123…`: for messages. */
export function describeGitRef(ref: GitRef): string {
  if ('branch' in ref) return `branch ${ref.branch}`;
  if ('tag' in ref) return `tag ${ref.tag}`;
  return `commit ${ref.commit}`;
}

/**
 * Flux's revision format, so status reads the same as a GitRepository's: `main@sha1:<sha>` for a branch,
 * `v1.0.0@sha1:<sha>` for a tag, `sha1:<sha>` for a commit.
 */
export function formatRevision(ref: GitRef, commit: string): string {
  if ('branch' in ref) return `${ref.branch}@sha1:${commit}`;
  if ('tag' in ref) return `${ref.tag}@sha1:${commit}`;
  return `sha1:${commit}`;
}

/** A revision read back: the branch or tag it followed (absent for a pinned commit) and its commit. */
interface ParsedRevision {
  readonly ref?: string;
  readonly commit: string;
}

/**
 * The inverse of formatRevision, for everything that shows or reports a revision read from status:
 * undefined for anything else (an empty revision before the first fetch, or one written by hand).
 * A branch may itself hold `@`, so the name ends at the last one.
 */
export function parseRevision(revision: string): ParsedRevision | undefined {
  const match = /^(?:(.+)@)?sha1:([0-9a-f]{40})$/.exec(revision);
  if (match === null) return undefined;
  const [, ref, commit = ''] = match;
  return ref === undefined ? { commit } : { ref, commit };
}
