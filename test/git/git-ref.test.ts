import { describeGitRef, formatRevision, type GitRef } from '../../src/git/git-ref.js';

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
