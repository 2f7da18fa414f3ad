import { describeGitRef, formatRevision, parseRevision, type GitRef } from '../../src/git/git-ref.js';

const sha = '0123456789abcdef0123456789abcdef01234567';

describe('git refs', () => {
  it.each<[GitRef, string, string]>([
    [{ branch: 'main' }, `main@sha1:${sha}`, 'branch main'],
    [{ tag: 'v1.2.3' }, `v1.2.3@sha1:${sha}`, 'tag v1.2.3'],
    [{ commit: sha }, `sha1:${sha}`, `commit ${sha}`],
  ])('formats %j as Flux does', (ref, revision, description) => {
    expect(formatRevision(ref, sha)).toBe(revision);
    expect(describeGitRef(ref)).toBe(description);
  });
});

describe('parseRevision', () => {
  it.each<[GitRef, { ref?: string; commit: string }]>([
    [{ branch: 'main' }, { ref: 'main', commit: sha }],
    [{ branch: 'release@2024' }, { ref: 'release@2024', commit: sha }],
    [{ tag: 'v1.2.3' }, { ref: 'v1.2.3', commit: sha }],
    [{ commit: sha }, { commit: sha }],
  ])('reads back what formatRevision wrote for %j', (ref, parsed) => {
    expect(parseRevision(formatRevision(ref, sha))).toEqual(parsed);
  });

  it.each([
    '',
    'main',
    `main@${sha}`,
    `main@sha1:${sha.slice(0, 12)}`,
    `main@sha1:${sha.toUpperCase()}`,
    `@sha1:${sha}`,
  ])('refuses %j, which no fetch wrote', (revision) => {
    expect(parseRevision(revision)).toBeUndefined();
  });
});
