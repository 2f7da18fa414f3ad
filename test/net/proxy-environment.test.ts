import {
  noProxyCovers,
  parseNoProxy,
  proxyEnvironmentOf,
  proxyFor,
} from '../../src/net/proxy-environment.js';

describe('the proxy environment', () => {
  it.each([
    ['*', 'https://git.example.com/repo.git', true],
    ['example.com', 'https://example.com/', true],
    ['example.com', 'https://git.example.com/', true],
    ['.example.com', 'https://git.example.com/', true],
    ['.example.com', 'https://example.com/', true],
    ['*.example.com', 'https://git.example.com/', true],
    ['example.com', 'https://notexample.com/', false],
    ['git.example.com', 'https://example.com/', false],
    ['Git.Example.COM', 'https://git.example.com./', true],
    ['example.com:8443', 'https://example.com:8443/', true],
    ['example.com:8443', 'https://example.com/', false],
    ['example.com:443', 'https://example.com/', true],
    ['10.0.0.5', 'http://10.0.0.5:8080/', true],
    ['[::1]:8080', 'http://[::1]:8080/', true],
    ['::1', 'http://[::1]:8080/', true],
    ['a.example, b.example', 'https://b.example/', true],
    ['', 'https://example.com/', false],
  ])('NO_PROXY=%j covers %s: %s', (noProxy, url, covered) => {
    expect(noProxyCovers(parseNoProxy(noProxy), new URL(url))).toBe(covered);
  });

  it('takes HTTPS_PROXY for https and HTTP_PROXY for http, lower case first, NO_PROXY going direct', () => {
    const environment = proxyEnvironmentOf({
      HTTPS_PROXY: 'http://upper.example:3128',
      https_proxy: 'http://lower.example:3128',
      HTTP_PROXY: 'plain.example:8080',
      NO_PROXY: 'internal.example',
    });
    expect(proxyFor(environment, new URL('https://git.example.com/r.git'))?.href).toBe(
      'http://lower.example:3128/',
    );
    expect(proxyFor(environment, new URL('http://git.example.com/r.git'))?.href).toBe(
      'http://plain.example:8080/',
    );
    expect(proxyFor(environment, new URL('https://git.internal.example/r.git'))).toBeUndefined();
    expect(proxyFor(proxyEnvironmentOf({}), new URL('https://git.example.com/'))).toBeUndefined();
  });

  it('refuses a proxy that is not http://', () => {
    expect(() => proxyEnvironmentOf({ HTTPS_PROXY: 'socks5://proxy.example:1080' })).toThrow(
      'HTTPS_PROXY must be an http:// proxy address, got socks5:// (proxy.example:1080)',
    );
  });
});
