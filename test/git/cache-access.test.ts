/**
 * The shared Git cache is no way around the Git server's access control: a revision is served from it only
 * to a caller that has shown, with its own credentials (or none), that the server lets it read the
 * repository, in this fetch or within the window (the caller's maxAgeMs, at most 5 minutes). Against a real
 * Git server (git http-backend) with basic auth on, whose request log shows who asked.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitAuthError, GitRefNotFoundError } from '../../src/git/git-error.js';
import { MAX_ACCESS_PROOF_AGE_MS } from '../../src/git/access-proofs.js';
import { createGitSource, type GitSource } from '../../src/git/git-source.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';

const files = {
  'app/secret-config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tenant-a-only\n',
};
const tenantA = { username: 'tenant-a', password: 'a-s3cret' };
/** As a reconcile on schedule asks: a fetch as young as the interval (5 minutes) will do. */
const ON_SCHEDULE = { maxAgeMs: 5 * 60_000 };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('the Git cache and the server access control', () => {
  let cacheDir: string;
  const servers: GitTestServer[] = [];
  let clock: number;

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'cache-access-test-'));
    clock = 1_000_000;
  });

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await rm(cacheDir, { recursive: true, force: true });
  });

  const serve = async (auth?: typeof tenantA): Promise<GitTestServer> => {
    const server = await startGitServer({ files, ...(auth === undefined ? {} : { auth }) });
    servers.push(server);
    return server;
  };
  const source = (): GitSource =>
    createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], now: () => clock });

  it('gives a caller without credentials nothing of a private repository the cache holds, in any ref form', async () => {
    const server = await serve(tenantA);
    await server.setTag('v1', 'main');
    const main = await server.revParse('main');
    const gitSource = source();
    // Tenant A fills the cache with every form of the ref.
    for (const ref of [{ branch: 'main' }, { tag: 'v1' }, { commit: main }]) {
      await gitSource.fetch({ url: server.url, ref, auth: tenantA }, ON_SCHEDULE);
    }
    expect((await gitSource.readManifests({ url: server.url, commit: main })).length).toBe(1);

    // Tenant B, no credentials, the same URL, a sha it read in A's status.
    for (const ref of [{ branch: 'main' }, { tag: 'v1' }, { commit: main }]) {
      const before = server.requests.length;
      const error = await rejection(gitSource.fetch({ url: server.url, ref }, ON_SCHEDULE));
      expect(error).toBeInstanceOf(GitAuthError);
      // The server heard B, without credentials, and said no.
      expect(server.requests.slice(before)).toEqual([
        expect.objectContaining({ status: 401, authorization: false, user: undefined }),
      ]);
    }
    // A short sha is never looked up in the cache (nor on the wire): it is ambiguous.
    const short = await rejection(gitSource.fetch({ url: server.url, ref: { commit: main.slice(0, 7) } }));
    expect(short).toBeInstanceOf(GitRefNotFoundError);
    // Wrong credentials are no better than none.
    const wrong = await rejection(
      gitSource.fetch(
        { url: server.url, ref: { commit: main }, auth: { username: 'tenant-b', password: 'guess' } },
        ON_SCHEDULE,
      ),
    );
    expect(wrong).toBeInstanceOf(GitAuthError);
  });

  it("proves the caller's access with a ref advertisement when its proof is older than the window", async () => {
    const server = await serve(tenantA);
    const main = await server.revParse('main');
    const gitSource = source();
    await gitSource.fetch({ url: server.url, ref: { branch: 'main' }, auth: tenantA });

    // Within the window: the commit the branch fetch brought is answered from the cache, the server not asked.
    let before = server.requests.length;
    clock += 60_000;
    expect(
      await gitSource.fetch({ url: server.url, ref: { commit: main }, auth: tenantA }, ON_SCHEDULE),
    ).toMatchObject({ commit: main, fetched: false });
    expect(server.requests.length).toBe(before);

    // Past it: one ref advertisement with A's credentials (isomorphic-git asks without them first), no objects.
    clock += MAX_ACCESS_PROOF_AGE_MS;
    before = server.requests.length;
    await gitSource.fetch({ url: server.url, ref: { commit: main }, auth: tenantA }, ON_SCHEDULE);
    const asked = server.requests.slice(before);
    expect(asked.every((request) => request.method === 'GET' && request.url.includes('/info/refs?'))).toBe(
      true,
    );
    expect(asked.filter((request) => request.user === 'tenant-a' && request.status === 200).length).toBe(1);

    // A fetch asked for now (maxAgeMs 0, a new spec) always asks the server.
    before = server.requests.length;
    await gitSource.fetch({ url: server.url, ref: { commit: main }, auth: tenantA });
    expect(server.requests.slice(before).some((request) => request.user === 'tenant-a')).toBe(true);
  });

  it('costs a fleet sharing a public repository what it cost before: one request per window', async () => {
    const server = await serve();
    const main = await server.revParse('main');
    const gitSource = source();
    const fleet = (ref: { branch: string } | { commit: string }) =>
      Promise.all(Array.from({ length: 50 }, () => gitSource.fetch({ url: server.url, ref }, ON_SCHEDULE)));

    // Branches: one fetch (an advertisement and an upload-pack) for all 50, as before.
    let before = server.requests.length;
    await fleet({ branch: 'main' });
    expect(server.requests.length - before).toBe(2);
    // A commit: the branch fetch proved anonymous access; within the window the fleet costs nothing.
    before = server.requests.length;
    await fleet({ commit: main });
    expect(server.requests.length - before).toBe(0);
    // Past the window: one advertisement for the whole fleet.
    clock += MAX_ACCESS_PROOF_AGE_MS + 1;
    before = server.requests.length;
    await fleet({ commit: main });
    expect(server.requests.length - before).toBe(1);
  });

  it('costs N callers with N credentials one advertisement each per window, sharing one fetch per caller', async () => {
    const users = Array.from({ length: 5 }, (_, i) => ({ username: `tenant-${i}`, password: `pw-${i}` }));
    const server = await serve(tenantA);
    const main = await server.revParse('main');
    const gitSource = source();
    await gitSource.fetch({ url: server.url, ref: { commit: main }, auth: tenantA });
    // The server knows one user only: every other caller is refused, each after its own requests (one
    // without credentials, as isomorphic-git starts, one with them); tenant A's proof is still fresh.
    const before = server.requests.length;
    const answers = await Promise.allSettled(
      [tenantA, ...users].flatMap((auth) =>
        [1, 2, 3].map(() => gitSource.fetch({ url: server.url, ref: { commit: main }, auth }, ON_SCHEDULE)),
      ),
    );
    expect(answers.filter((answer) => answer.status === 'fulfilled').length).toBe(3);
    const asked = server.requests.slice(before);
    expect(asked.every((request) => request.status === 401)).toBe(true);
    expect(asked.length).toBe(2 * users.length);
  });
});
