// What proving access to the Git cache costs a fleet at rest (issue #23, finding 2): N ApplySets on one
// repository URL reconcile on schedule (maxAgeMs = their interval), their phases spread evenly over the
// interval, for one simulated hour on the Git source's clock, the cache warm. A real Git server
// (git http-backend) serves the repository; for private scenarios a front requires basic auth (any user:
// each ApplySet its own credentials) and passes the request on. Counted: the requests the server got.
// Run: node --import tsx bench/cache-access-bench.ts [N]
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitSource } from '../src/git/git-source.js';
import type { GitRef } from '../src/git/git-ref.js';
import { startGitServer } from '../test/harness/git-server.js';

const HOUR_MS = 60 * 60_000;
const files = { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n' };

interface Scenario {
  readonly intervalMs: number;
  readonly ref: 'branch' | 'commit';
  /** 0: a public repository, every ApplySet anonymous; else ApplySet i uses credentials i mod this. */
  readonly identities: number;
}

/** A front that answers 401 to a request without credentials and passes the others to `target`. */
async function authFront(
  target: string,
): Promise<{ url: string; requests: () => number; close: () => void }> {
  let count = 0;
  const origin = new URL(target);
  const server = http.createServer((req, res) => {
    count += 1;
    if (req.headers.authorization === undefined) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
      res.end();
      return;
    }
    const upstream = http.request(
      { host: origin.hostname, port: origin.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${origin.pathname}`,
    requests: () => count,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

async function run(fleet: number, scenario: Scenario): Promise<number> {
  const git = await startGitServer({ files });
  const front = scenario.identities === 0 ? undefined : await authFront(git.url);
  const url = front?.url ?? git.url;
  const requests = () => front?.requests() ?? git.requests.length;
  const cacheDir = await mkdtemp(join(tmpdir(), 'cache-access-bench-'));
  let clock = 0;
  const source = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], now: () => clock });
  const ref: GitRef = scenario.ref === 'branch' ? { branch: 'main' } : { commit: await git.revParse('main') };
  const authOf = (i: number) =>
    scenario.identities === 0
      ? {}
      : { auth: { username: `tenant-${i % scenario.identities}`, password: 'pw' } };
  const events = Array.from({ length: fleet }, (_, i) => i)
    .flatMap((i) => {
      const times: { at: number; i: number }[] = [];
      for (let at = (i * scenario.intervalMs) / fleet; at < HOUR_MS; at += scenario.intervalMs)
        times.push({ at, i });
      return times;
    })
    .sort((a, b) => a.at - b.at);
  // At rest: the cache holds the commit and every ApplySet has reconciled once before the hour starts.
  clock = -scenario.intervalMs;
  for (let i = 0; i < fleet; i += 1) await source.fetch({ url, ref, ...authOf(i) });
  const before = requests();
  for (const { at, i } of events) {
    clock = at;
    await source.fetch({ url, ref, ...authOf(i) }, { maxAgeMs: scenario.intervalMs });
  }
  const counted = requests() - before;
  front?.close();
  await git.close();
  await rm(cacheDir, { recursive: true, force: true });
  return counted;
}

const fleet = Number(process.argv[2] ?? 100);
console.log(
  `fleet of ${fleet} ApplySets on one repository URL, one hour at rest: requests to the Git server`,
);
for (const intervalMs of [5 * 60_000, 10 * 60_000]) {
  for (const ref of ['branch', 'commit'] as const) {
    for (const identities of [0, fleet]) {
      const requests = await run(fleet, { intervalMs, ref, identities });
      const who = identities === 0 ? 'public, anonymous' : `${identities} distinct credentials`;
      console.log(`interval ${intervalMs / 60_000}m, ${ref} ref, ${who}: ${requests}`);
    }
  }
}
