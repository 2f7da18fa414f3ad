/**
 * The Git test server, exercised with isomorphic-git as the controller uses it: clones with and without
 * basic auth, a clear error for a wrong password, and changes made while the server runs.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import fs from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';

const files = { 'app/config.yaml': 'kind: ConfigMap\n', 'README.md': '# test\n' };
const credentials = { username: 'alice', password: 'correct horse' };

describe('the Git test server', () => {
  let servers: GitTestServer[] = [];
  let work: string;

  beforeEach(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'git-test-server-test-'));
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
    await rm(work, { recursive: true, force: true });
  });

  const start = async (options: Parameters<typeof startGitServer>[0]) => {
    const server = await startGitServer(options);
    servers.push(server);
    return server;
  };

  const clone = (url: string, dir: string, onAuth?: () => { username: string; password: string }) =>
    git.clone({ fs, http, dir: path.join(work, dir), url, singleBranch: true, depth: 1, onAuth });

  it('serves a repository that isomorphic-git clones without auth', async () => {
    const server = await start({ files });
    await clone(server.url, 'plain');
    expect(await readFile(path.join(work, 'plain', 'app', 'config.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
    expect(await git.resolveRef({ fs, dir: path.join(work, 'plain'), ref: 'HEAD' })).toBe(
      await server.revParse('main'),
    );
  });

  it('serves a repository behind basic auth to a client with the right credentials', async () => {
    const server = await start({ files, auth: credentials });
    await clone(server.url, 'authed', () => credentials);
    expect(await readdir(path.join(work, 'authed'))).toEqual(expect.arrayContaining(['README.md', 'app']));
    expect(
      server.requests.filter((request) => request.status === 200).map((request) => request.user),
    ).toEqual(expect.arrayContaining(['alice']));
  });

  it('answers a wrong password with 401, which isomorphic-git reports as an HTTP 401 error', async () => {
    const server = await start({ files, auth: credentials });
    await expect(
      clone(server.url, 'wrong', () => ({ username: 'alice', password: 'wrong' })),
    ).rejects.toMatchObject({
      code: 'HttpError',
      data: { statusCode: 401 },
      message: 'HTTP Error: 401 Unauthorized',
    });
    await expect(clone(server.url, 'anonymous')).rejects.toMatchObject({ data: { statusCode: 401 } });
  });

  it('takes commits, deletions, branches and tags while it runs', async () => {
    const server = await start({ files });
    const first = await server.revParse('main');
    const second = await server.writeFiles({ 'app/extra.yaml': 'extra: true\n' });
    const third = await server.deleteFiles(['README.md']);
    await server.setBranch('release', second);
    await server.setTag('v1', first, { annotated: true });
    const onFeature = await server.commitTree({ 'only.yaml': 'x: 1\n' }, { branch: 'feature' });

    const refs = await git.listServerRefs({ http, url: server.url, peelTags: true });
    const byRef = new Map(refs.map((ref) => [ref.ref, ref]));
    expect(byRef.get('refs/heads/main')?.oid).toBe(third);
    expect(byRef.get('refs/heads/release')?.oid).toBe(second);
    expect(byRef.get('refs/heads/feature')?.oid).toBe(onFeature);
    expect(byRef.get('refs/tags/v1')?.peeled).toBe(first);

    await clone(server.url, 'latest');
    expect((await readdir(path.join(work, 'latest'))).sort()).toEqual(['.git', 'app']);
    expect((await readdir(path.join(work, 'latest', 'app'))).sort()).toEqual(['config.yaml', 'extra.yaml']);

    await server.deleteBranch('release');
    await server.deleteTag('v1');
    const after = await git.listServerRefs({ http, url: server.url });
    expect(after.map((ref) => ref.ref)).not.toEqual(expect.arrayContaining(['refs/heads/release']));
    expect(after.map((ref) => ref.ref)).not.toEqual(expect.arrayContaining(['refs/tags/v1']));
  });

  it('produces the same shas for the same changes (fixed author, committer and clock)', async () => {
    const one = await start({ files });
    const two = await start({ files });
    expect(await one.revParse('main')).toBe(await two.revParse('main'));
    expect(await one.writeFiles({ 'a.yaml': 'a\n' })).toBe(await two.writeFiles({ 'a.yaml': 'a\n' }));
  });

  it('goes offline keeping its URL, and comes back on the same URL', async () => {
    const server = await start({ files });
    await server.goOffline();
    await expect(clone(server.url, 'offline')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.goOnline();
    await clone(server.url, 'online');
    expect(await readdir(path.join(work, 'online'))).toContain('app');
  });

  it('serves the git CLI too (protocol v2, credentials in the URL)', async () => {
    const server = await start({ files, auth: credentials });
    const dir = path.join(work, 'cli');
    await promisify(execFile)('git', ['clone', '--quiet', server.urlWithCredentials, dir], {
      env: { PATH: process.env.PATH, HOME: work, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
    });
    expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# test\n');
  });

  it('accepts a gzip-encoded upload-pack request, as git sends large ones', async () => {
    const server = await start({ files });
    const sha = await server.revParse('main');
    const pktLine = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const request = `${pktLine(`want ${sha}\n`)}0000${pktLine('done\n')}`;
    const response = await fetch(`${server.url}/git-upload-pack`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-git-upload-pack-request',
        'Content-Encoding': 'gzip',
      },
      body: gzipSync(request),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.includes('PACK')).toBe(true);
  });

  it('passes http-backend statuses through (404 for an unknown repository)', async () => {
    const server = await start({ files });
    const response = await fetch(
      `${server.url.replace('repo.git', 'other.git')}/info/refs?service=git-upload-pack`,
    );
    expect(response.status).toBe(404);
    await response.arrayBuffer();
  });

  it('serves an empty repository', async () => {
    const server = await start({});
    expect(await git.listServerRefs({ http, url: server.url })).toEqual([]);
  });
});
