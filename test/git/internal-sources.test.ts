/**
 * A source URL must not make the controller a client of what listens only for its own pod (SSRF): loopback,
 * the pod's own addresses and link-local are refused before any request, for the URL, for what its name
 * resolves to when connecting and for every redirect, unless an allowed host names them; and what the
 * status says of a source that is not a Git server does not tell an open port from a closed one.
 * Against real HTTP servers on this machine's loopback and own addresses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GitSourceNotAllowedError, GitUnreachableError } from '../../src/git/git-error.js';
import { createGitSource, type GitSourceOptions } from '../../src/git/git-source.js';
import { guardedLookup } from '../../src/net/guarded-lookup.js';
import { internalAddressReason, podAddresses } from '../../src/net/internal-address.js';
import { destinationUrlRefusal } from '../../src/net/destination-url-refusal.js';

const ADMIN_PATH = '/admin/do-something?confirm=yes';

describe('internalAddressReason', () => {
  const own = new Set(['10.1.2.3', 'fd00:0:0:0:0:0:0:2']);

  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.8.9.10', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['0:0:0:0:0:0:0:1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['0.0.0.0', 'a loopback address'],
    ['::', 'a loopback address'],
    ['10.1.2.3', "an address of the controller's own host"],
    ['fd00::2', "an address of the controller's own host"],
    ['::ffff:10.1.2.3', "an address of the controller's own host"],
  ])('refuses %s', (address, reason) => {
    expect(internalAddressReason(address, own)).toBe(reason);
  });

  it.each(['10.1.2.4', '192.168.1.1', '8.8.8.8', '2001:db8::1', 'git.example.com'])(
    'allows %s',
    (address) => {
      expect(internalAddressReason(address, own)).toBeUndefined();
    },
  );

  it("knows this machine's own addresses", () => {
    const mine = [...podAddresses()].filter((address) => !address.startsWith('127.'));
    expect(mine.length).toBeGreaterThan(0);
    for (const address of mine) expect(internalAddressReason(address)).toEqual(expect.any(String));
  });
});

describe('destinationUrlRefusal of internal hosts', () => {
  it.each([
    ['http://127.0.0.1:8080/r.git', '127.0.0.1 is a loopback address (--allowed-source-hosts may name it)'],
    ['http://127.1/r.git', '127.0.0.1 is a loopback address'],
    ['http://[::1]:8080/r.git', '::1 is a loopback address'],
    ['http://0.0.0.0:8080/r.git', '0.0.0.0 is a loopback address'],
    ['http://localhost:8080/r.git', 'localhost is a loopback host name'],
    ['http://LocalHost./r.git', 'is a loopback host name'],
    ['http://git.localhost/r.git', 'git.localhost is a loopback host name'],
  ])('refuses %s when no allowed host names it', (url, reason) => {
    expect(destinationUrlRefusal(url, [])).toContain(reason);
  });

  it('re-admits a loopback host an allowed host names, on the port it names', () => {
    expect(destinationUrlRefusal('http://127.0.0.1:8080/r.git', ['127.0.0.1'])).toBeUndefined();
    expect(destinationUrlRefusal('http://localhost:8080/r.git', ['localhost:8080'])).toBeUndefined();
    expect(destinationUrlRefusal('http://localhost:9090/r.git', ['localhost:8080'])).toContain(
      'not among the allowed source hosts',
    );
  });

  it('never re-admits link-local or metadata addresses', () => {
    expect(destinationUrlRefusal('http://169.254.169.254/r.git', ['169.254.169.254'])).toContain(
      'link-local',
    );
    expect(destinationUrlRefusal('http://[fe80::1]/r.git', ['[fe80::1]'])).toContain('link-local');
  });
});

describe('the Git source and internal servers', () => {
  let cacheDir: string;
  const closers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'internal-sources-test-'));
  });

  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
    await rm(cacheDir, { recursive: true, force: true });
  });

  const source = (options: Partial<GitSourceOptions> = {}) => createGitSource({ cacheDir, ...options });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected the fetch to fail');
      },
      (error: unknown) => error,
    );

  /** A server that answers on every address of this machine (`host` '::' or '0.0.0.0') or on one. */
  const listen = async (
    server: http.Server | net.Server,
    host = '127.0.0.1',
  ): Promise<{ port: number; closed: () => Promise<void> }> => {
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const sockets = new Set<net.Socket>();
    server.on('connection', (socket: net.Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    const closed = () =>
      new Promise<void>((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    closers.push(closed);
    return { port: (server.address() as AddressInfo).port, closed };
  };

  /** An internal admin endpoint: it records every request it gets, and answers like a web app. */
  const adminServer = async (host = '127.0.0.1') => {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(req.url ?? '/');
      req.resume();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>done</html>');
    });
    const { port } = await listen(server, host);
    return { port, requests };
  };

  it('refuses a URL naming loopback before any request, and sends it when an allowed host names it', async () => {
    const admin = await adminServer();
    const url = `http://127.0.0.1:${admin.port}${ADMIN_PATH}`;
    const refused = await failure(source().fetch({ url, ref: { branch: 'main' } }));
    expect(refused).toBeInstanceOf(GitSourceNotAllowedError);
    expect(refused).toMatchObject({ reason: 'SourceNotAllowed', intent: 'stalled' });
    expect((refused as Error).message).toContain('127.0.0.1 is a loopback address');
    expect(admin.requests).toEqual([]);

    const allowed = await failure(
      source({ allowedHosts: ['127.0.0.1'] }).fetch({ url, ref: { branch: 'main' } }),
    );
    expect(allowed).toBeInstanceOf(GitUnreachableError);
    expect(admin.requests.length).toBeGreaterThan(0);
  });

  it("refuses a name that resolves to loopback (this machine's host name) when connecting", async () => {
    const admin = await adminServer('0.0.0.0');
    const error = await failure(
      source().fetch({ url: `http://${os.hostname()}:${admin.port}${ADMIN_PATH}`, ref: { branch: 'main' } }),
    );
    expect(error).toBeInstanceOf(GitSourceNotAllowedError);
    expect((error as Error).message).toMatch(/resolves to .*(a loopback address|the controller's own host)/);
    expect(admin.requests).toEqual([]);
  });

  it("refuses an address of the controller's own interfaces", async () => {
    const admin = await adminServer('0.0.0.0');
    const own = [...podAddresses()].find((address) => net.isIPv4(address) && !address.startsWith('127.'));
    expect(own).toBeDefined();
    const error = await failure(
      source().fetch({ url: `http://${own}:${admin.port}${ADMIN_PATH}`, ref: { branch: 'main' } }),
    );
    expect((error as Error).message).toContain(`${own} is an address of the controller's own host`);
    expect(admin.requests).toEqual([]);
  });

  it('refuses a redirect to loopback before following it', async () => {
    const admin = await adminServer();
    const front = http.createServer((req, res) => {
      req.resume();
      res.writeHead(302, { Location: `http://127.0.0.1:${admin.port}${ADMIN_PATH}` });
      res.end();
    });
    const { port } = await listen(front);
    // The front's name resolves to loopback too, which an allowed host re-admits for it alone.
    const lookup = guardedLookup(
      (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
      ['front.test'],
    );
    const error = await failure(
      source({ lookup }).fetch({ url: `http://front.test:${port}/repo.git`, ref: { branch: 'main' } }),
    );
    expect(error).toBeInstanceOf(GitSourceNotAllowedError);
    expect((error as Error).message).toContain(
      `redirected to http://127.0.0.1:${admin.port}: 127.0.0.1 is a loopback`,
    );
    expect(admin.requests).toEqual([]);
  });

  it('says the same of a closed port, a non-Git HTTP server, a reset and a TLS mismatch', async () => {
    const admin = await adminServer();
    const closed = await listen(http.createServer());
    await closed.closed();
    const reset = await listen(net.createServer((socket) => socket.destroy()));
    const notHttp = await listen(net.createServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n')));
    const urls = [
      `http://127.0.0.1:${closed.port}/repo.git`,
      `http://127.0.0.1:${admin.port}/repo.git`,
      `http://127.0.0.1:${admin.port}/missing.git`,
      `http://127.0.0.1:${reset.port}/repo.git`,
      `http://127.0.0.1:${notHttp.port}/repo.git`,
      `https://127.0.0.1:${admin.port}/repo.git`,
    ];
    const said = await Promise.all(
      urls.map(async (url) => {
        const error = await failure(
          source({ allowedHosts: ['127.0.0.1'] }).fetch({ url, ref: { branch: 'main' } }),
        );
        expect(error).toBeInstanceOf(GitUnreachableError);
        const { reason, intent, message } = error as GitUnreachableError;
        return [reason, intent, message.replace(url, '<url>')];
      }),
    );
    expect(new Set(said.map((entry) => JSON.stringify(entry)))).toEqual(
      new Set([
        JSON.stringify([
          'GitUnreachable',
          'retryable',
          'Git source <url> unreachable or not a Git repository',
        ]),
      ]),
    );
  });
});
