import { parseOciUrl } from '../../../src/source/oci/oci-reference.js';
import { parseChallenge, tokenUrl } from '../../../src/source/oci/registry-challenge.js';

// What an ApplySet's oci:// URL and a registry's 401 challenge are read as, before any request is built.

describe('parseOciUrl', () => {
  it.each([
    ['oci://ghcr.io/team/app', { host: 'ghcr.io', repository: 'team/app' }],
    ['oci://127.0.0.1:5000/a-b/c.d/e__f', { host: '127.0.0.1:5000', repository: 'a-b/c.d/e__f' }],
    ['oci://[::1]:5000/app', { host: '[::1]:5000', repository: 'app' }],
    ['oci://Registry.Example/app', { host: 'registry.example', repository: 'app' }],
  ])('reads %s', (url, expected) => {
    expect(parseOciUrl(url)).toEqual(expected);
  });

  it.each([
    ['https://ghcr.io/team/app', 'must start with oci://'],
    ['oci://ghcr.io', 'must name a host and a repository'],
    ['oci://ghcr.io/Team/app', 'is not a repository name'],
    ['oci://ghcr.io/team/app:v1', 'no tag or digest in the URL'],
    ['oci://ghcr.io/team/../admin', 'is not a repository name'],
    ['oci://ghcr.io/team//app', 'is not a repository name'],
    ['oci://user:pw@ghcr.io/app', 'is not a host'],
    ['oci://ghcr.io/app?x=1', 'is not a repository name'],
  ])('refuses %s', (url, problem) => {
    expect(parseOciUrl(url)).toEqual({ problem: expect.stringContaining(problem) });
  });
});

describe('a registry challenge', () => {
  it('reads a Bearer challenge, quoted commas included, and builds the token request', () => {
    const challenge = parseChallenge(
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"',
    );
    expect(challenge).toEqual({
      scheme: 'bearer',
      params: {
        realm: 'https://auth.example/token',
        service: 'registry.example',
        scope: 'repository:a/b:pull,push',
      },
    });
    expect(tokenUrl(challenge!, 'repository:a/b:pull')?.href).toBe(
      'https://auth.example/token?service=registry.example&scope=repository%3Aa%2Fb%3Apull%2Cpush',
    );
  });

  it('asks for pull on the repository when the challenge names no scope, and refuses a realm that is not http(s)', () => {
    const plain = parseChallenge('Bearer realm="https://auth.example/token"')!;
    expect(tokenUrl(plain, 'repository:a/b:pull')?.searchParams.get('scope')).toBe('repository:a/b:pull');
    expect(tokenUrl(parseChallenge('Bearer realm="file:///etc/passwd"')!, 's')).toBeUndefined();
    expect(tokenUrl(parseChallenge('Bearer service="x"')!, 's')).toBeUndefined();
  });

  it('reads Basic, and no challenge at all', () => {
    expect(parseChallenge('Basic realm="Registry Realm"')).toEqual({
      scheme: 'basic',
      params: { realm: 'Registry Realm' },
    });
    expect(parseChallenge(undefined)).toBeUndefined();
    expect(parseChallenge('')).toBeUndefined();
  });
});
