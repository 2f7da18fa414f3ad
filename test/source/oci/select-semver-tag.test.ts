import {
  selectSemverTag,
  semverRangeProblem,
  tagSatisfies,
} from '../../../src/source/oci/select-semver-tag.js';

// spec.source.ref.semver: of a repository's tags, the highest semantic version the range matches, as
// Flux's OCIRepository picks it; with npm's semver rules for ranges and prereleases.

const where = 'oci://registry.example/team/app';

describe('the tag a semver range selects', () => {
  it.each<[string, string[], string, string]>([
    ['the highest satisfying', ['1.0.0', '1.2.0', '2.0.0', 'latest'], '>=1.0.0 <2.0.0', '1.2.0'],
    ['in any order the registry lists', ['1.2.0', '2.0.0', '1.10.0', '1.9.3'], '^1.0.0', '1.10.0'],
    ['a leading v', ['v1.0.0', 'v1.3.1', 'v2.0.0'], '1.x', 'v1.3.1'],
    ['v and plain mixed', ['v1.4.0', '1.3.0'], '>=1.0.0', 'v1.4.0'],
    ['the plain name of a version tagged twice', ['v1.4.0', '1.4.0', 'v1.3.0'], '>=1.0.0', '1.4.0'],
    ['past tags that are not versions', ['latest', 'main-4f2a', '1.2', 'V1.5.0', '1.1.0'], '*', '1.1.0'],
    ['a release over its prereleases', ['1.3.0-rc.1', '1.2.0'], '>=1.0.0 <2.0.0', '1.2.0'],
    [
      'a prerelease when the range names one',
      ['1.3.0-rc.1', '1.3.0-rc.2', '1.2.0'],
      '>=1.3.0-rc.0',
      '1.3.0-rc.2',
    ],
    ['a release over a prerelease of it', ['1.3.0-rc.1', '1.3.0'], '>=1.3.0-rc.0', '1.3.0'],
    ['an exact version', ['1.0.0', '1.0.1'], '1.0.0', '1.0.0'],
  ])('picks %s', (_name, tags, range, expected) => {
    expect(selectSemverTag(tags, range, where)).toBe(expected);
  });

  it('picks no prerelease for a range that names none, as npm semver does by default', () => {
    expect(() => selectSemverTag(['2.0.0-beta.1', '1.9.0-rc.1'], '>=1.0.0', where)).toThrow(
      /no tag satisfies/,
    );
  });

  it('stalls ArtifactNotFound naming the range, the tags seen and the highest version', () => {
    const select = () => selectSemverTag(['latest', '2.0.0', 'v2.1.0', '0.9.0'], '>=1.0.0 <2.0.0', where);
    expect(select).toThrow(
      expect.objectContaining({
        reason: 'ArtifactNotFound',
        intent: 'stalled',
        message: `${where}: no tag satisfies spec.source.ref.semver ">=1.0.0 <2.0.0": of the 4 tags seen, 3 are semantic versions, the highest v2.1.0; nothing was applied`,
      }),
    );
  });

  it('says so when the repository has no tag, or none that is a version', () => {
    expect(() => selectSemverTag([], '*', where)).toThrow(
      'of the 0 tags seen, 0 are semantic versions; nothing was applied',
    );
    expect(() => selectSemverTag(['latest'], '*', where)).toThrow(
      'of the 1 tag seen, 0 are semantic versions; nothing was applied',
    );
  });
});

describe('a semver range in the spec', () => {
  it.each(['>=1.0.0 <2.0.0', '^1.2', '~1.2.3', '1.x', '*', '>=1.3.0-rc.0', '1.0.0 - 1.4.0', '^1 || ^2'])(
    'takes %s',
    (range) => {
      expect(semverRangeProblem(range)).toBeUndefined();
    },
  );

  it.each<[string, string]>([
    ['', 'must not be empty'],
    ['  ', 'must not be empty'],
    ['latest', 'is not a semver range (such as >=1.0.0 <2.0.0'],
    ['>=1.0.0, <2.0.0', 'write "and" as a space (>=1.0.0 <2.0.0), not a comma'],
    [`>=${'1'.repeat(300)}`, 'must be at most 256 characters'],
  ])('refuses %j: %s', (range, message) => {
    expect(semverRangeProblem(range)).toContain(message);
  });
});

describe('whether a pushed tag concerns a range', () => {
  it.each<[string, string, boolean]>([
    ['1.5.0', '>=1.0.0 <2.0.0', true],
    ['v1.5.0', '>=1.0.0 <2.0.0', true],
    ['2.0.0', '>=1.0.0 <2.0.0', false],
    ['1.5.0-rc.1', '>=1.0.0 <2.0.0', false],
    ['latest', '*', false],
    ['1.5.0', 'not a range', false],
  ])('%s in %j: %s', (tag, range, expected) => {
    expect(tagSatisfies(tag, range)).toBe(expected);
  });
});
