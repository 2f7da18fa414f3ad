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

  it.each([
    [
      'an ssh URL',
      'ssh://git@Git.Example.com/org/repo.git/',
      { port: 22, path: '/org/repo.git' },
      'ssh://git@git.example.com/org/repo.git',
    ],
    [
      'a port',
      'ssh://git@example.com:2222/repo.git',
      { port: 2222, path: '/repo.git' },
      'ssh://git@example.com:2222/repo.git',
    ],
    [
      'no user (git)',
      'ssh://example.com/repo.git',
      { port: 22, path: '/repo.git' },
      'ssh://git@example.com/repo.git',
    ],
    [
      'a home-relative path',
      'ssh://git@example.com/~/repo.git',
      { port: 22, path: '~/repo.git' },
      'ssh://git@example.com/~/repo.git',
    ],
    [
      'the scp-like form',
      'git@example.com:org/repo.git',
      { port: 22, path: 'org/repo.git' },
      'ssh://git@example.com/org/repo.git',
    ],
    [
      'the scp-like form, absolute',
      'me@example.com:/srv/repo.git',
      { port: 22, path: '/srv/repo.git' },
      'ssh://me@example.com/srv/repo.git',
    ],
  ])('reads %s as an SSH target', (_, raw, target, url) => {
    const parsed = parseRepositoryUrl(raw);
    expect(parsed.url).toBe(url);
    expect(parsed.credentials).toBeUndefined();
    expect(parsed.ssh).toEqual(
      expect.objectContaining({
        host: raw.includes('Example') ? 'git.example.com' : 'example.com',
        ...target,
      }),
    );
  });

  it('gives an ssh URL and its scp-like form one cache key, and another than the https URL', () => {
    const ssh = parseRepositoryUrl('ssh://git@example.com/org/repo.git').cacheKey;
    expect(parseRepositoryUrl('git@example.com:org/repo.git').cacheKey).toBe(ssh);
    expect(parseRepositoryUrl('https://example.com/org/repo.git').cacheKey).not.toBe(ssh);
  });

  it.each([
    'ssh://git:secret@example.com/repo.git',
    'ssh://git@example.com/',
    "ssh://git@example.com/repo'; rm -rf ~'",
    'example.com:repo.git',
    'ext::sh -c touch% /tmp/pwned',
    'file:///tmp/repo',
    'not a url',
  ])('refuses %j', (url) => {
    expect(() => parseRepositoryUrl(url)).toThrow(GitRepositoryNotFoundError);
  });

  it('never echoes credentials of an unparseable URL', () => {
    expect(() => parseRepositoryUrl('https://me:hunter2@exa mple.com/repo')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });
});
