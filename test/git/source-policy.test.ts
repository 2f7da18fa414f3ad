/**
 * Where the Git source may fetch from and where credentials may go, against a real Git server on loopback
 * (git http-backend) and a real redirecting HTTP server in front of it: refusals are made before any request,
 * every redirect hop is checked, credentials never reach another origin.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { credentialsRefusal } from '../../src/git/credentials-refusal.js';
import { GitCredentialsNotForHostError, GitSourceNotAllowedError } from '../../src/git/git-error.js';
import { createGitSource, type GitSourceOptions } from '../../src/git/git-source.js';
import { guardedLookup, type ResolveAll } from '../../src/net/guarded-lookup.js';
import { parseSourceHostList } from '../../src/net/host-list.js';
import { destinationUrlRefusal } from '../../src/net/destination-url-refusal.js';
import { startGitServer, type GitServerOptions, type GitTestServer } from '../harness/git-server.js';

const files = { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n' };
const credentials = { username: 'deploy', password: 'n0t-f0r-y0u' };

describe('destinationUrlRefusal', () => {
  it.each([
    [
      'http://169.254.169.254/latest/meta-data.git',
      '169.254.169.254 is a link-local (cloud metadata) address',
    ],
    ['http://[fe80::1]/x.git', 'fe80::1 is a link-local address'],
    ['http://[::ffff:169.254.169.254]/x.git', 'is a link-local (cloud metadata) address'],
    ['http://2852039166/x.git', '169.254.169.254 is a link-local'],
    ['http://metadata.google.internal/x.git', 'metadata.google.internal is a cloud metadata host name'],
    ['http://Metadata.Google.Internal./x.git', 'is a cloud metadata host name'],
    ['file:///etc/x.git', 'unsupported scheme file:'],
    ['not a url', 'not a valid URL'],
  ])('refuses %s', (url, reason) => {
    expect(destinationUrlRefusal(url, [])).toContain(reason);
  });

  it.each(['https://git.example.com/r.git', 'http://10.0.0.1/r.git'])(
    'allows %s when no hosts are listed',
    (url) => {
      expect(destinationUrlRefusal(url, [])).toBeUndefined();
    },
  );

  it('refuses a host outside the allowed list, naming it', () => {
    const allowed = parseSourceHostList('git.example.com, 127.0.0.1:8080');
    expect(destinationUrlRefusal('https://git.example.com/r.git', allowed)).toBeUndefined();
    expect(destinationUrlRefusal('http://127.0.0.1:8080/r.git', allowed)).toBeUndefined();
    expect(destinationUrlRefusal('http://127.0.0.1:8081/r.git', allowed)).toBe(
      '127.0.0.1:8081 is not among the allowed source hosts (git.example.com, 127.0.0.1:8080)',
    );
  });

  it('refuses a metadata address even when it is listed as allowed', () => {
    expect(destinationUrlRefusal('http://169.254.169.254/x.git', ['169.254.169.254'])).toContain(
      'link-local',
    );
  });
});

describe('credentialsRefusal', () => {
  const url = 'https://git.example.com/org/repo.git';

  it.each([
    ['no annotation, not required', undefined, false, undefined],
    ['the host listed', ['git.example.com'], true, undefined],
    ['the host listed with its default port', ['git.example.com:443'], true, undefined],
  ])('allows %s', (_name, hosts, required, expected) => {
    expect(credentialsRefusal(url, hosts, required)).toBe(expected);
  });

  it.each([
    [
      'no annotation while required',
      undefined,
      'names no hosts (annotation applyset.dev/source-hosts), which this controller requires',
    ],
    [
      'another host',
      ['git.other.org'],
      'is for git.other.org (annotation applyset.dev/source-hosts), not git.example.com',
    ],
    ['another port', ['git.example.com:8443'], 'not git.example.com'],
    ['a parent domain', ['example.com'], 'not git.example.com'],
    ['an empty list', [], 'is for no host'],
  ])('refuses %s', (_name, hosts, reason) => {
    expect(credentialsRefusal(url, hosts, true)).toContain(reason);
  });
});

describe('guardedLookup', () => {
  const resolver =
    (answers: Record<string, string[]>): ResolveAll =>
    (hostname, _options, callback) => {
      const addresses = answers[hostname];
      if (addresses === undefined) {
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      } else {
        callback(
          null,
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
      }
    };
  const lookup = guardedLookup(
    resolver({
      'git.test': ['127.0.0.1', '::1'],
      'rebind.test': ['10.0.0.1', '169.254.169.254'],
      'internal.test': ['10.0.0.1', '127.0.0.1'],
    }),
    ['git.test:8080', 'rebind.test'],
  );
  const run = (hostname: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: unknown }>((resolve) =>
      lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family })),
    );

  it('refuses a name that resolves to loopback unless an allowed host names it', async () => {
    const { error } = await run('internal.test', false);
    expect(error).toMatchObject({
      code: 'SOURCE_ADDRESS_REFUSED',
      message: 'internal.test resolves to 127.0.0.1, a loopback address',
    });
  });

  it('answers a name an allowed host names in the form asked for', async () => {
    expect(await run('git.test', false)).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    expect((await run('git.test', true)).address).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
  });

  it('refuses a name any of whose addresses is forbidden', async () => {
    const { error } = await run('rebind.test', true);
    expect(error).toMatchObject({
      code: 'SOURCE_ADDRESS_REFUSED',
      message: 'rebind.test resolves to 169.254.169.254, a link-local (cloud metadata) address',
    });
  });

  it('passes resolver errors on', async () => {
    expect((await run('nowhere.test', false)).error).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('the Git source under a source policy', () => {
  let cacheDir: string;
  const closers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'source-policy-test-'));
  });

  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
    await rm(cacheDir, { recursive: true, force: true });
  });

  const serve = async (options: GitServerOptions = { files }): Promise<GitTestServer> => {
    const server = await startGitServer(options);
    closers.push(() => server.close());
    return server;
  };
  // The test servers listen on loopback, which only an allowed host re-admits.
  const source = (options: Partial<GitSourceOptions> = {}) =>
    createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], ...options });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected the fetch to fail');
      },
      (error: unknown) => error,
    );

  /** An HTTP server that answers every request with `status` and a Location built from its path. */
  const redirector = async (
    location: (requestPath: string) => string,
    status = 302,
  ): Promise<{ url: string; hostPort: string; requests: { url: string; authorization: boolean }[] }> => {
    const requests: { url: string; authorization: boolean }[] = [];
    const server = http.createServer((req, res) => {
      requests.push({ url: req.url ?? '/', authorization: req.headers.authorization !== undefined });
      req.resume();
      res.writeHead(status, { Location: location(req.url ?? '/') });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/repo.git`, hostPort: `127.0.0.1:${port}`, requests };
  };

  it('sends credentials to a host their Secret names (any port when it names none)', async () => {
    const server = await serve({ files, auth: credentials });
    const fetched = await source({ requireCredentialHosts: true }).fetch({
      url: server.url,
      ref: { branch: 'main' },
      auth: { ...credentials, hosts: ['127.0.0.1'], from: 'Secret ns/creds' },
    });
    expect(fetched.commit).toBe(await server.revParse('main'));
  });

  it('refuses credentials for a host their Secret does not name, before any request', async () => {
    const server = await serve({ files, auth: credentials });
    const error = await failure(
      source().fetch({
        url: server.url,
        ref: { branch: 'main' },
        auth: { ...credentials, hosts: ['git.example.com'], from: 'Secret ns/creds' },
      }),
    );
    expect(error).toBeInstanceOf(GitCredentialsNotForHostError);
    expect(error).toMatchObject({
      intent: 'stalled',
      message: `credentials not sent to ${server.url}: Secret ns/creds is for git.example.com (annotation applyset.dev/source-hosts), not ${new URL(server.url).host}`,
    });
    expect(server.requests).toEqual([]);
  });

  it('refuses credentials whose Secret names no hosts when they are required, before any request', async () => {
    const server = await serve({ files, auth: credentials });
    const error = await failure(
      source({ requireCredentialHosts: true }).fetch({
        url: server.url,
        ref: { branch: 'main' },
        auth: { token: 'tok', from: 'Secret ns/creds' },
      }),
    );
    expect(error).toBeInstanceOf(GitCredentialsNotForHostError);
    expect((error as Error).message).toContain('Secret ns/creds names no hosts');
    expect(server.requests).toEqual([]);
  });

  it('refuses a host outside the allowed source hosts, and a metadata address, before any request', async () => {
    const server = await serve();
    const outside = await failure(
      source({ allowedHosts: ['git.example.com'] }).fetch({ url: server.url, ref: { branch: 'main' } }),
    );
    expect(outside).toBeInstanceOf(GitSourceNotAllowedError);
    expect((outside as Error).message).toContain('is not among the allowed source hosts (git.example.com)');
    expect(server.requests).toEqual([]);

    const metadata = await failure(
      source().fetch({ url: 'http://169.254.169.254/x.git', ref: { branch: 'main' } }),
    );
    expect(metadata).toMatchObject({
      code: 'GIT_SOURCE_NOT_ALLOWED',
      message:
        'source http://169.254.169.254/x.git is not allowed: 169.254.169.254 is a link-local (cloud metadata) address',
    });
  });

  it('resolves names with the guarded lookup when connecting', async () => {
    const server = await serve();
    const port = new URL(server.url).port;
    const lookup = guardedLookup(
      (hostname, _options, callback) =>
        callback(null, [{ address: hostname === 'git.test' ? '127.0.0.1' : '169.254.169.254', family: 4 }]),
      ['git.test', 'rebind.test'],
    );
    const fetched = await source({ lookup, allowedHosts: [] }).fetch({
      url: `http://git.test:${port}/repo.git`,
      ref: { branch: 'main' },
    });
    expect(fetched.commit).toBe(await server.revParse('main'));

    const before = server.requests.length;
    const error = await failure(
      source({ lookup, allowedHosts: [] }).fetch({
        url: `http://rebind.test:${port}/repo.git`,
        ref: { branch: 'main' },
      }),
    );
    expect(error).toBeInstanceOf(GitSourceNotAllowedError);
    expect((error as Error).message).toBe(
      `source http://rebind.test:${port}/repo.git is not allowed: rebind.test resolves to 169.254.169.254, a link-local (cloud metadata) address`,
    );
    expect(server.requests.length).toBe(before);
  });

  it('follows a redirect to another origin without credentials', async () => {
    const server = await serve();
    // 307 keeps the POST of git-upload-pack a POST, with its body.
    const front = await redirector((requestPath) => `${new URL(server.url).origin}${requestPath}`, 307);
    const fetched = await source().fetch({ url: front.url, ref: { branch: 'main' } });
    expect(fetched.commit).toBe(await server.revParse('main'));
    expect(front.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((request) => !request.authorization)).toBe(true);
  });

  it('never sends credentials after a redirect to another origin (here: another port of the same host)', async () => {
    const server = await serve({ files, auth: credentials });
    const front = await redirector((requestPath) => `${new URL(server.url).origin}${requestPath}`);
    const error = await failure(
      source().fetch({
        url: front.url,
        ref: { branch: 'main' },
        auth: { ...credentials, hosts: [front.hostPort], from: 'Secret ns/creds' },
      }),
    );
    expect(error).toBeInstanceOf(GitCredentialsNotForHostError);
    expect((error as Error).message).toBe(
      `credentials not sent to ${front.url}: a request carrying them was redirected to ${new URL(server.url).origin}, another origin than ${new URL(front.url).origin}; use that URL in spec.source.url`,
    );
    // The server behind the redirect asked for credentials and never got any.
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.filter((request) => request.authorization)).toEqual([]);
  });

  it('refuses a redirect to a metadata address or to a host outside the allowed ones', async () => {
    const server = await serve();
    const toMetadata = await redirector(() => 'http://169.254.169.254/latest/meta-data/');
    const metadata = await failure(source().fetch({ url: toMetadata.url, ref: { branch: 'main' } }));
    expect(metadata).toBeInstanceOf(GitSourceNotAllowedError);
    expect((metadata as Error).message).toContain(
      'redirected to http://169.254.169.254: 169.254.169.254 is a link-local',
    );

    const toOther = await redirector((requestPath) => `${new URL(server.url).origin}${requestPath}`);
    const outside = await failure(
      source({ allowedHosts: [toOther.hostPort] }).fetch({ url: toOther.url, ref: { branch: 'main' } }),
    );
    expect(outside).toBeInstanceOf(GitSourceNotAllowedError);
    expect((outside as Error).message).toContain(
      `${new URL(server.url).host} is not among the allowed source hosts`,
    );
    expect(server.requests).toEqual([]);
  });
});
