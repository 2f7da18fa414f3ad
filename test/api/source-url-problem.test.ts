import { sourceUrlProblem } from '../../src/api/resolve-source-spec.js';

/** The URL is read as the Git source reads it (WHATWG URL): every form that carries a user is refused. */
describe('sourceUrlProblem', () => {
  const CREDENTIALS = 'credentials must not be part of the URL; use secretRef';

  it.each([
    ['user and password', 'https://u:p@host/repo.git'],
    ['a third slash before the userinfo, which a pattern on "//[^/]*@" misses', 'https:///u:p@host/repo.git'],
    ['a user without a password', 'https://u@host/repo.git'],
    ['a password without a user', 'https://:p@host/repo.git'],
    ['an upper-case scheme', 'HTTPS://u:p@h/repo.git'],
    ['an encoded @ in the user', 'https://u%40corp:p@host/repo.git'],
    ['backslashes for slashes', 'https:\\\\u:p@host\\repo.git'],
    ['a mixed slash and backslash', 'http:/\\u:p@host/repo.git'],
  ])('refuses %s', (_, url) => {
    expect(sourceUrlProblem(url)).toBe(CREDENTIALS);
  });

  it.each([
    ['a plain https URL', 'https://git.example.com/team/repo.git'],
    ['an @ in the path', 'https://git.example.com/team/repo@v1'],
    ['an @ in the query', 'https://git.example.com/repo.git?owner=a@b'],
    ['an empty userinfo, which carries nothing', 'https://@git.example.com/repo.git'],
    ['a port and http', 'http://git.example.com:8080/repo.git'],
  ])('accepts %s', (_, url) => {
    expect(sourceUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['an ssh URL', 'ssh://git@host/repo.git'],
    ['an ssh URL with a port', 'ssh://git@host:2222/org/repo.git'],
    ['the scp-like form', 'git@github.com:org/repo.git'],
  ])('accepts %s', (_, url) => {
    expect(sourceUrlProblem(url)).toBeUndefined();
  });

  it('refuses a password in an ssh URL', () => {
    expect(sourceUrlProblem('ssh://git:hunter2@host/repo.git')).toBe(CREDENTIALS);
  });

  it.each([
    ['a file URL', 'file:///etc/passwd'],
    ['an ext:: remote helper', 'ext::sh -c touch% /tmp/pwned'],
    ['the scp-like form without a user', 'host:repo.git'],
    ['no URL at all', 'git.example.com/repo.git'],
    ['whitespace', 'https://git.example.com/re po.git'],
    ['an encoded @ in the host', 'https://host%40evil.example/repo.git'],
  ])('refuses %s as no http(s) or ssh URL', (_, url) => {
    expect(sourceUrlProblem(url)).toBe('must be an http, https or ssh URL, or git@host:path');
  });
});
