import { GitRepositoryNotFoundError } from '../../src/git/git-error.js';
import { parseRepositoryUrl } from '../../src/git/parse-repository-url.js';

describe('parseRepositoryUrl', () => {
  it('removes credentials from the URL and returns them separately', () => {
    const parsed = parseRepositoryUrl('https://me:s%40cret@git.example.com/org/repo.git');
    expect(parsed.url).toBe('https://git.example.com/org/repo.git');
    expect(parsed.credentials).toEqual({ username: 'me', password: 's@cret' });
  });

  it('gives one cache key to a repository whatever the credentials, case of the host or trailing slash', () => {
    const keys = new Set(
      [
        'https://git.example.com/org/repo.git',
        'https://me:one@git.example.com/org/repo.git',
        'https://other:two@GIT.example.com/org/repo.git/',
        'https://git.example.com:443/org/repo.git#fragment',
      ].map((url) => parseRepositoryUrl(url).cacheKey),
    );
    expect(keys.size).toBe(1);
    const [key] = keys;
    expect(key).toMatch(/^[0-9a-f]{32}$/);
  });

  it('gives different repositories different cache keys', () => {
    expect(parseRepositoryUrl('https://git.example.com/org/a.git').cacheKey).not.toBe(
      parseRepositoryUrl('https://git.example.com/org/b.git').cacheKey,
    );
  });

  it.each(['ssh://git@example.com/repo.git', 'file:///tmp/repo', 'not a url'])('refuses %j', (url) => {
    expect(() => parseRepositoryUrl(url)).toThrow(GitRepositoryNotFoundError);
  });

  it('never echoes credentials of an unparseable URL', () => {
    expect(() => parseRepositoryUrl('https://me:hunter2@exa mple.com/repo')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });
});
