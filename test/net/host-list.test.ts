import { parseSourceHostList, sourceHostListAllows } from '../../src/net/host-list.js';

describe('source host lists', () => {
  const list = parseSourceHostList(' Git.Example.com ,, git.other.org:8443 ,[::1]:8080');

  it('normalizes entries', () => {
    expect(list).toEqual(['git.example.com', 'git.other.org:8443', '[::1]:8080']);
  });

  it.each([
    'https://GIT.example.com/org/repo.git',
    'http://git.example.com:8080/repo.git',
    'https://git.other.org:8443/repo.git',
    'http://[::1]:8080/repo.git',
  ])('allows %s', (url) => {
    expect(sourceHostListAllows(list, url)).toBe(true);
  });

  it.each([
    'https://evil.example.com/repo.git',
    'https://git.example.com.evil.org/repo.git',
    'https://git.other.org/repo.git',
    'http://[::1]:8081/repo.git',
  ])('refuses %s', (url) => {
    expect(sourceHostListAllows(list, url)).toBe(false);
  });

  it('counts the default port', () => {
    expect(sourceHostListAllows(parseSourceHostList('h.example:443'), 'https://h.example/r.git')).toBe(true);
  });
});
