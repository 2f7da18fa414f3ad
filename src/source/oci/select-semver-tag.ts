/**
 * `spec.source.ref.semver` of an `oci://` source, as Flux's OCIRepository has it: of a repository's
 * tags, those that are semantic versions (a leading `v` accepted, `v1.2.0` as `1.2.0`), the highest
 * that satisfies the range. Pure: the tags are listed by the registry client, the range is checked by
 * the spec resolver with semverRangeProblem. The range is npm's semver syntax, with its default on
 * prereleases: `1.3.0-rc.1` satisfies only a range naming a prerelease of 1.3.0 (`>=1.3.0-rc.0`).
 */
import { Range, SemVer, compare, parse, satisfies } from 'semver';
import { ArtifactNotFoundError } from './registry-error.js';

/** Longer ranges are refused before they are parsed. */
const MAX_RANGE_LENGTH = 256;

/** What is wrong with `range` as a semver range, or undefined when it is one. */
export function semverRangeProblem(range: string): string | undefined {
  if (range.trim() === '') return 'must not be empty (write * for any version)';
  if (range.length > MAX_RANGE_LENGTH) return `must be at most ${MAX_RANGE_LENGTH} characters`;
  // Flux's Go semver reads a comma as "and"; npm's semver does not, so say how to write it.
  const comma = range.includes(',') ? '; write "and" as a space (>=1.0.0 <2.0.0), not a comma' : '';
  try {
    new Range(range);
    return comma === '' ? undefined : `is not a semver range${comma}`;
  } catch {
    return `is not a semver range (such as >=1.0.0 <2.0.0, ^1.2, 1.x or ~1.2.3)${comma}`;
  }
}

/**
 * The tag of the highest version satisfying `range`; the choice never depends on the registry's
 * order. Tags that are not semantic versions (`latest`, `main-4f2a`) are passed over. Throws
 * ArtifactNotFoundError, stalling the set until a matching tag is pushed or the range changed, when
 * no tag satisfies it.
 */
export function selectSemverTag(tags: readonly string[], range: string, where: string): string {
  const wanted = new Range(range);
  let best: TaggedVersion | undefined;
  let top: TaggedVersion | undefined;
  let versions = 0;
  for (const tag of tags) {
    const version = parse(tag);
    if (version === null) continue;
    versions += 1;
    top = higher(top, { tag, version });
    if (satisfies(version, wanted)) best = higher(best, { tag, version });
  }
  if (best !== undefined) return best.tag;
  const seen = `of the ${tags.length} ${tags.length === 1 ? 'tag' : 'tags'} seen, ${versions} ${versions === 1 ? 'is a semantic version' : 'are semantic versions'}`;
  throw new ArtifactNotFoundError(
    `${where}: no tag satisfies spec.source.ref.semver ${JSON.stringify(range)}: ${seen}${top === undefined ? '' : `, the highest ${top.tag}`}; nothing was applied`,
  );
}

/**
 * Whether `tag` is a version `range` matches: a push of it may make it the highest, so a set following
 * the range is woken by it. False for a range that is not one (semver's satisfies says so).
 */
export function tagSatisfies(tag: string, range: string): boolean {
  const version = parse(tag);
  return version !== null && satisfies(version, range);
}

interface TaggedVersion {
  readonly tag: string;
  readonly version: SemVer;
}

/** The higher of two versions; of two tags of one version (`1.2.0`, `v1.2.0`), the first by name. */
function higher(current: TaggedVersion | undefined, next: TaggedVersion): TaggedVersion {
  if (current === undefined) return next;
  const order = compare(next.version, current.version);
  return order > 0 || (order === 0 && next.tag < current.tag) ? next : current;
}
