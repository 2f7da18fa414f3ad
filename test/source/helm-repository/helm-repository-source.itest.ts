import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { parseSourceHostList } from '../../../src/net/host-list.js';
import { createHelmRepositorySource } from '../../../src/source/helm-repository/helm-repository-source.js';

// The Helm repository source against a real HTTP server on loopback: the index read and kept for its
// age, the archive checked against the index's digest and extracted to the chart's directory, the
// index's bound, the repository's failures with their intents, and Basic credentials sent only to the
// repository's origin and only when their Secret names its host.

interface Route {
  readonly status?: number;
  readonly body?: Buffer | string;
  readonly headers?: Readonly<Record<string, string>>;
}

async function chartArchive(version: string): Promise<Buffer> {
  const archive = pack();
  archive.entry({ name: 'web/Chart.yaml' }, `apiVersion: v2\nname: web\nversion: ${version}\n`);
  archive.entry({ name: 'web/templates/cm.yaml' }, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n');
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.pipe(createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function serve(routes: Map<string, Route>, seen: { path: string; headers: IncomingHttpHeaders }[]) {
  const server = createServer((request, response) => {
    const url = request.url ?? '/';
    seen.push({ path: url, headers: request.headers });
    const route = routes.get(url);
    response.writeHead(route?.status ?? (route === undefined ? 404 : 200), route?.headers ?? {});
    response.end(route?.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('the Helm repository source', () => {
  let cacheDir: string;
  let archive: Buffer;
  const routes = new Map<string, Route>();
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  let main: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  const signal = new AbortController().signal;
  const index = (entries: object) => JSON.stringify({ apiVersion: 'v1', entries });

  beforeAll(async () => {
    cacheDir = await mkdtemp(path.join(tmpdir(), 'applyset-helm-source-'));
    archive = await chartArchive('1.0.0');
    main = await serve(routes, seen);
    other = await serve(routes, seen);
  });

  afterAll(async () => {
    await close(main.server);
    await close(other.server);
    await rm(cacheDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    routes.clear();
    seen.length = 0;
  });

  const source = (options: { maxIndexBytes?: number; now?: () => number } = {}) =>
    createHelmRepositorySource({ cacheDir, allowedHosts: parseSourceHostList('127.0.0.1'), ...options });
  const request = (repo: string, extra: object = {}) => ({
    url: `${main.origin}${repo}`,
    chart: 'web',
    range: '*',
    credentials: undefined,
    maxAgeMs: 60_000,
    ...extra,
  });

  it("extracts the chosen version to the chart's directory, and keeps the index for its age", async () => {
    routes.set('/r1/index.yaml', {
      body: index({ web: [{ version: '1.0.0', urls: ['web-1.0.0.tgz'], digest: sha256(archive) }] }),
    });
    routes.set('/r1/web-1.0.0.tgz', { body: archive });
    let clock = 0;
    const read = source({ now: () => clock });
    const fetched = await read(request('/r1'), signal);
    expect(fetched.revision).toBe(`web@1.0.0@sha256:${sha256(archive)}`);
    expect(fetched.digest).toBe(`sha256:${sha256(archive)}`);
    expect(path.basename(fetched.directory)).toBe('web');
    expect(await readFile(path.join(fetched.directory, 'Chart.yaml'), 'utf8')).toContain('version: 1.0.0');

    await read(request('/r1'), signal);
    expect(seen.filter((s) => s.path === '/r1/index.yaml')).toHaveLength(1);
    // The archive the index names by digest is extracted already: it is not downloaded again.
    expect(seen.filter((s) => s.path === '/r1/web-1.0.0.tgz')).toHaveLength(1);
    clock = 60_000;
    await read(request('/r1'), signal);
    expect(seen.filter((s) => s.path === '/r1/index.yaml')).toHaveLength(2);
  });

  it('refuses an archive whose digest is not the index entry’s', async () => {
    routes.set('/r2/index.yaml', {
      body: index({ web: [{ version: '1.0.0', urls: ['web-1.0.0.tgz'], digest: 'ab'.repeat(32) }] }),
    });
    routes.set('/r2/web-1.0.0.tgz', { body: archive });
    await expect(source()(request('/r2'), signal)).rejects.toMatchObject({
      reason: 'HelmChartDigestMismatch',
      intent: 'stalled',
    });
  });

  it('refuses an index over its bound, reading no further', async () => {
    routes.set('/r3/index.yaml', { body: `${index({})}\n#${'x'.repeat(4096)}` });
    await expect(source({ maxIndexBytes: 1024 })(request('/r3'), signal)).rejects.toMatchObject({
      reason: 'HelmIndexTooLarge',
      intent: 'stalled',
    });
  });

  it('retries a repository that answers 503 or nothing, and stalls on one that refuses', async () => {
    routes.set('/r4/index.yaml', { status: 503 });
    await expect(source()(request('/r4'), signal)).rejects.toMatchObject({
      reason: 'HelmRepositoryUnreachable',
      intent: 'retryable',
    });
    const closed = await serve(new Map(), []);
    await close(closed.server);
    await expect(source()({ ...request(''), url: closed.origin }, signal)).rejects.toMatchObject({
      reason: 'HelmRepositoryUnreachable',
    });
    routes.set('/r4b/index.yaml', { status: 401 });
    await expect(source()(request('/r4b'), signal)).rejects.toMatchObject({ reason: 'AuthenticationFailed' });
  });

  it("sends Basic credentials to the repository's origin only, and only to a host their Secret names", async () => {
    routes.set('/r5/index.yaml', {
      body: index({ web: [{ version: '1.0.0', urls: [`${other.origin}/elsewhere/web.tgz`] }] }),
    });
    routes.set('/elsewhere/web.tgz', { body: archive });
    const credentials = {
      username: 'u',
      password: 'p',
      from: 'Secret a/b',
      hosts: parseSourceHostList('127.0.0.1'),
    };
    await source()(request('/r5', { credentials }), signal);
    const authorizationOf = (p: string) => seen.find((s) => s.path === p)?.headers.authorization;
    expect(authorizationOf('/r5/index.yaml')).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(authorizationOf('/elsewhere/web.tgz')).toBeUndefined();

    seen.length = 0;
    const elsewhere = { ...credentials, hosts: parseSourceHostList('charts.example.com') };
    await expect(source()(request('/r5', { credentials: elsewhere }), signal)).rejects.toMatchObject({
      reason: 'CredentialsNotForHost',
      message: expect.stringContaining('Secret a/b is for charts.example.com'),
    });
    expect(seen).toEqual([]);
  });
});
