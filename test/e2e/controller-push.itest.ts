import { createHmac } from 'node:crypto';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  logCount,
  startController,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';

// Issue #15 point 4 and issue #14's Git sharing, with the controller as its own process: a signed push
// webhook reconciles the ApplySets of that repository and branch at once (their interval is an hour);
// a bad signature changes nothing; and ApplySets polling one repository on their interval share its
// fetches instead of each fetching it.

const SECRET = 'push-s3cret';
const REQUESTED = 'applyset.dev/reconcile-requested-at';

describe('push webhooks and shared fetches', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-push');
  const servers = new GitServerPool();
  let controller: ControllerProcess;
  let webhookPort: number;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'hooks' }, stringData: { 'main-repo': SECRET } },
    });
    controller = await startController({
      namespace,
      args: [
        '--webhook-addr',
        '127.0.0.1:0',
        '--webhook-secret',
        `${namespace}/hooks`,
        '--allowed-source-hosts',
        '127.0.0.1',
      ],
    });
    const started = controller.logs.find((line) => line['msg'] === 'controller started');
    webhookPort = started?.['webhookPort'] as number;
  });

  afterAll(() => stopControllersAndGit(servers));

  const push = (url: string, signature: (body: string) => string, branch = 'main') => {
    const body = JSON.stringify({
      ref: `refs/heads/${branch}`,
      repository: { clone_url: `${url}.git`, html_url: url },
    });
    return fetch(`http://127.0.0.1:${webhookPort}/hook/main-repo`, {
      method: 'POST',
      headers: { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${signature(body)}` },
      body,
    });
  };
  const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');

  it('applies a pushed commit at once, and refuses a bad signature without touching anything', async () => {
    const git = await servers.start({ files: { 'cm.yaml': configMapYaml('pushed', { v: '1' }) } });
    await createApplySet(c, namespace, 'site', { url: git.url, interval: '1h' });
    await createApplySet(c, namespace, 'other-branch', { url: git.url, branch: 'other', interval: '1h' });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);

    const forged = await git.writeFiles({ 'cm.yaml': configMapYaml('pushed', { v: 'forged' }) });
    const before = (await getApplySet(c, namespace, 'site'))?.metadata.annotations?.[REQUESTED];
    const refused = await push(git.url, (body) => createHmac('sha256', 'guess').update(body).digest('hex'));
    expect(refused.status).toBe(401);
    expect((await getApplySet(c, namespace, 'site'))?.metadata.annotations?.[REQUESTED]).toBe(before);

    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('pushed', { v: '2' }) });
    expect(sha).not.toBe(forged);
    const accepted = await push(git.url, sign);
    expect(accepted.status).toBe(202);
    // Only the ApplySet of the pushed branch; the one on `other` is not asked.
    expect(await accepted.json()).toEqual({ matched: 1 });
    await waitForAppliedCommit(c, namespace, 'site', sha, 30_000);
    expect(await configMapData(c, namespace, 'pushed')).toEqual({ v: '2' });
  });

  it('lets ApplySets polling one repository share its fetches on their interval', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i += 1)
      files[`set-${i}/cm.yaml`] = configMapYaml(`shared-${i}`, { i: String(i) });
    const git = await servers.start({ files });
    const keys: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      await createApplySet(c, namespace, `shared-${i}`, { url: git.url, path: `set-${i}`, interval: '15s' });
      keys.push(`${namespace}/shared-${i}`);
    }
    for (const key of keys)
      await waitForReady(c, namespace, key.split('/')[1] ?? '', 'True', undefined, 60_000);
    const reconciled = () => keys.map((key) => logCount(controller, key, 'reconciled'));
    const first = reconciled();
    const fetchesBefore = git.requests.filter(
      (r) => r.method === 'GET' && r.url.includes('/info/refs'),
    ).length;
    // Every ApplySet reconciles once more on its own interval...
    await waitFor(
      'a second reconcile of every ApplySet',
      async () => (reconciled().every((count, i) => count > (first[i] ?? 0)) ? true : undefined),
      60_000,
    );
    const fetches =
      git.requests.filter((r) => r.method === 'GET' && r.url.includes('/info/refs')).length - fetchesBefore;
    // ...and twelve reconciles on schedule asked the server a couple of times, not twelve (a fetch is
    // reused for 15 s, longer than the second round takes even on a loaded machine).
    expect(fetches).toBeGreaterThanOrEqual(1);
    expect(fetches).toBeLessThanOrEqual(4);
  });
});
