import { generateAppKey, startGitHubAppServer, type GitHubAppServer } from '../harness/github-app-server.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { runShippedCli } from '../harness/shipped-cli.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  startController,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { createNotification } from './notification-receivers.js';

// Issue #37, GitHub Apps as Git credentials, through the real controller and API server. There is no
// GitHub here: the harness's github-app-server.ts stands in for GitHub's App endpoints (the
// installation lookups and the access token exchange, as GitHub documents them, verifying the JWT's
// signature and claims as GitHub does). Everything after the token is real: the Git server
// (git http-backend) accepts `x-access-token:<token>` for the tokens it issued and nothing else.

const SOURCE_HOSTS = { 'applyset.dev/source-hosts': '127.0.0.1' };
const APP_ID = '31337';

describe('the controller with a GitHub App', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-github-app');
  const appKey = generateAppKey();
  let github: GitHubAppServer;
  let git: GitTestServer;
  let controller: ControllerProcess;

  const appSecret = (name: string, keys: Record<string, string>) =>
    c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, annotations: SOURCE_HOSTS },
        stringData: { githubAppID: APP_ID, githubAppBaseURL: github.url, ...keys },
      },
    });
  const exchangesOf = (installation: number) =>
    github.requests.filter(
      (request) =>
        request.path === `/app/installations/${installation}/access_tokens` && request.status === 201,
    ).length;
  const reconcilesOf = (name: string) =>
    controller.logs.filter(
      (line) => line['applyset'] === `${namespace}/${name}` && line['msg'] === 'reconciled',
    ).length;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    github = await startGitHubAppServer([
      {
        appId: APP_ID,
        publicKey: appKey.publicKey,
        installations: [
          { id: 4501, owner: 'platform', ownerType: 'Organization' },
          { id: 4502, owner: 'alice', ownerType: 'User' },
          { id: 4503, owner: 'statuses', ownerType: 'Organization' },
          { id: 4504, owner: 'short-lived', ownerType: 'Organization' },
        ],
      },
    ]);
    git = await startGitServer({
      repositoryName: 'platform/site.git',
      // One directory per ApplySet: each applies its own ConfigMap.
      files: {
        'site/cm.yaml': configMapYaml('site', { v: '1' }),
        'by-owner/cm.yaml': configMapYaml('by-owner', { v: '1' }),
        'wrong-key/cm.yaml': configMapYaml('wrong-key', { v: '1' }),
        'short-lived/cm.yaml': configMapYaml('short-lived', { v: '1' }),
      },
      auth: github.gitAuth,
    });
    await appSecret('github-app', {
      githubAppInstallationID: '4501',
      githubAppPrivateKey: appKey.privateKeyPem,
    });
    await appSecret('github-app-alice', {
      githubAppInstallationOwner: 'alice',
      githubAppPrivateKey: appKey.privateKeyPem,
    });
    await appSecret('github-app-short-lived', {
      githubAppInstallationID: '4504',
      githubAppPrivateKey: appKey.privateKeyPem,
    });
    await appSecret('github-app-wrong-key', {
      githubAppInstallationID: '4501',
      githubAppPrivateKey: generateAppKey().privateKeyPem,
    });
    await appSecret('github-statuses', {
      address: github.url,
      githubAppInstallationID: '4503',
      githubAppPrivateKey: appKey.privateKeyPem,
    });
    controller = await startController({ namespace, args: ['--cluster-name', 'e2e'] });
  });

  afterAll(async () => {
    await stopAllControllers();
    await git?.close();
    await github?.close();
  });

  it('fetches with an installation token, and reuses it across reconciles and commits', async () => {
    await createNotification(c, namespace, 'statuses', { type: 'github', secret: 'github-statuses' }, [
      'site',
    ]);
    const first = await git.revParse('main');
    await createApplySet(c, namespace, 'site', {
      url: git.url,
      secretName: 'github-app',
      interval: '2s',
      path: 'site',
    });
    await waitForAppliedCommit(c, namespace, 'site', first, 60_000);
    expect(await configMapData(c, namespace, 'site')).toEqual({ v: '1' });
    // The Git server let the token in, and refused nothing else.
    expect(git.requests).toContainEqual(expect.objectContaining({ user: 'x-access-token', status: 200 }));

    const second = await git.writeFiles({ 'site/cm.yaml': configMapYaml('site', { v: '2' }) });
    await waitForAppliedCommit(c, namespace, 'site', second, 60_000);
    const runs = reconcilesOf('site');
    await waitFor(
      'three more reconciles',
      async () => (reconcilesOf('site') >= runs + 3 ? true : undefined),
      60_000,
    );
    expect(await configMapData(c, namespace, 'site')).toEqual({ v: '2' });
    // One exchange for every fetch so far: the token lives an hour, and is used until 5 minutes before.
    expect(exchangesOf(4501)).toBe(1);

    // The commit status, marked by the same app's installation token.
    const marked = await waitFor('the commit marked success', async () => {
      const mine = github.statuses.filter((status) => status.sha === second);
      return mine.some((status) => status.state === 'success') ? mine : undefined;
    });
    expect(marked[0]).toMatchObject({
      repository: 'platform/site',
      context: `applyset/e2e/${namespace}/site`,
    });
    expect(exchangesOf(4503)).toBe(1);
  });

  it('previews another branch with the CLI, as users run it, through its own installation token', async () => {
    await git.writeFiles({ 'site/cm.yaml': configMapYaml('site', { v: 'next' }) }, { branch: 'next' });
    const exchanges = exchangesOf(4501);
    const preview = await runShippedCli(
      [
        'diff',
        '--applyset-object',
        'site',
        '-n',
        namespace,
        '--ref',
        'next',
        '--allowed-source-hosts',
        '127.0.0.1',
      ],
      { ...process.env, KUBECONFIG: adminKubeconfigPath() },
    );
    // Exit 1: the preview found changes, as kubectl diff says so.
    expect(preview.code).toBe(1);
    expect(preview.stdout).toContain(`~ configmap/site -n ${namespace}`);
    expect(preview.stdout).toContain('data.v: "2" → "next"');
    // The CLI is a process of its own: it made the JWT and asked for its own token.
    expect(exchangesOf(4501)).toBe(exchanges + 1);
    expect(await configMapData(c, namespace, 'site')).toEqual({ v: '2' });
  });

  it('asks for a new token when the one it has is about to expire', async () => {
    // Tokens that live 4 minutes are inside the 5-minute margin from the start: each fetch needs a new one.
    github.setTokenLifetime(4 * 60_000);
    try {
      await createApplySet(c, namespace, 'short-lived', {
        url: git.url,
        secretName: 'github-app-short-lived',
        interval: '2s',
        path: 'short-lived',
      });
      await waitForReady(c, namespace, 'short-lived', 'True', undefined, 60_000);
      const runs = reconcilesOf('short-lived');
      await waitFor(
        'two more reconciles',
        async () => (reconcilesOf('short-lived') >= runs + 2 ? true : undefined),
        60_000,
      );
      expect(exchangesOf(4504)).toBeGreaterThanOrEqual(3);
      expect(condition(await getApplySet(c, namespace, 'short-lived'), 'Ready')?.status).toBe('True');
    } finally {
      github.setTokenLifetime(60 * 60_000);
    }
  });

  it("looks the installation up by its owner: a user's after the organisation's 404", async () => {
    await createApplySet(c, namespace, 'by-owner', {
      url: git.url,
      secretName: 'github-app-alice',
      interval: '1h',
      path: 'by-owner',
    });
    await waitForReady(c, namespace, 'by-owner', 'True', undefined, 60_000);
    const lookups = github.requests
      .filter((request) => request.path.endsWith('/alice/installation'))
      .map((request) => `${request.method} ${request.path} ${request.status}`);
    expect(lookups).toEqual(['GET /orgs/alice/installation 404', 'GET /users/alice/installation 200']);
    expect(exchangesOf(4502)).toBe(1);
  });

  it("stalls on a private key that is not the app's as GitHubAppAuthFailed, naming what to check", async () => {
    const gitRequests = git.requests.length;
    await createApplySet(c, namespace, 'wrong-key', {
      url: git.url,
      secretName: 'github-app-wrong-key',
      interval: '1h',
      path: 'wrong-key',
    });
    const view = await waitForReady(c, namespace, 'wrong-key', 'False', undefined, 60_000);
    expect(condition(view, 'Ready')?.reason).toBe('GitHubAppAuthFailed');
    expect(condition(view, 'Ready')?.message).toContain('check githubAppID and githubAppPrivateKey');
    expect(condition(view, 'Stalled')?.status).toBe('True');
    expect(JSON.stringify(view)).not.toContain('PRIVATE KEY');
    // No credentials reached the Git server for it: no token, so no fetch with one refused.
    const refused = git.requests.slice(gitRequests).filter((r) => r.status === 401 && r.authorization);
    expect(refused).toEqual([]);
  });
});
