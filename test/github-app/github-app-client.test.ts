import { exchangeInstallationToken, type TokenExchange } from '../../src/github-app/github-app-client.js';
import { readAppPrivateKey } from '../../src/github-app/github-app-jwt.js';
import type { GitHubApp } from '../../src/github-app/github-app-secret.js';
import { gitPolicy } from '../../src/net/destination-policy.js';
import { generateAppKey, startGitHubAppServer, type GitHubAppServer } from '../harness/github-app-server.js';

// The exchange against the harness's stand-in for GitHub (there is no GitHub here): it implements the
// installation lookups and the access token endpoint as GitHub documents them, and verifies the JWT's
// RS256 signature and claims as GitHub would.

describe('exchangeInstallationToken', () => {
  const appKey = generateAppKey();
  let github: GitHubAppServer;
  let app: GitHubApp;

  beforeAll(async () => {
    github = await startGitHubAppServer([
      {
        appId: '123',
        publicKey: appKey.publicKey,
        installations: [
          { id: 456, owner: 'platform', ownerType: 'Organization' },
          { id: 789, owner: 'alice', ownerType: 'User' },
        ],
      },
    ]);
    app = {
      appId: '123',
      installation: { id: '456' },
      privateKey: appKey.privateKeyPem,
      baseUrl: github.url,
      from: 'Secret team-a/app',
    };
  });
  afterAll(() => github?.close());

  const exchange = (given: Partial<GitHubApp> = {}, privateKey = appKey.privateKeyPem): TokenExchange => ({
    app: { ...app, ...given },
    key: readAppPrivateKey(privateKey, 'Secret team-a/app'),
    policy: gitPolicy(['127.0.0.1']),
    nowMs: Date.now(),
    signal: AbortSignal.timeout(20_000),
  });
  const pathsSince = (start: number) =>
    github.requests.slice(start).map((r) => `${r.method} ${r.path} ${r.status}`);

  it('exchanges the JWT for a token of the installation, with its expiry', async () => {
    const before = Date.now();
    const issued = await exchangeInstallationToken(exchange());
    expect(issued.token).toMatch(/^ghs_/);
    expect(issued.installationId).toBe('456');
    expect(issued.expiresAtMs).toBeGreaterThan(before + 59 * 60_000);
    expect(github.gitAuth.accepts('x-access-token', issued.token)).toBe(true);
  });

  it("finds the installation on an organisation, or on a user after the organisation's 404", async () => {
    let start = github.requests.length;
    expect(
      (await exchangeInstallationToken(exchange({ installation: { owner: 'platform' } }))).installationId,
    ).toBe('456');
    expect(pathsSince(start)).toEqual([
      'GET /orgs/platform/installation 200',
      'POST /app/installations/456/access_tokens 201',
    ]);
    start = github.requests.length;
    expect(
      (await exchangeInstallationToken(exchange({ installation: { owner: 'alice' } }))).installationId,
    ).toBe('789');
    expect(pathsSince(start)).toEqual([
      'GET /orgs/alice/installation 404',
      'GET /users/alice/installation 200',
      'POST /app/installations/789/access_tokens 201',
    ]);
  });

  it.each([
    [
      'a key of another app',
      {},
      generateAppKey().privateKeyPem,
      'GitHubAppAuthFailed',
      'the private key is not one of that app',
    ],
    ['an app id GitHub does not know', { appId: '999' }, undefined, 'GitHubAppAuthFailed', 'githubAppID'],
    [
      'an installation not of this app',
      { installation: { id: '1' } },
      undefined,
      'GitHubAppInstallationNotFound',
      'githubAppInstallationID',
    ],
    [
      'an owner the app is not installed on',
      { installation: { owner: 'nobody' } },
      undefined,
      'GitHubAppInstallationNotFound',
      'installed neither on an organisation nor on a user named nobody',
    ],
  ])('stalls on %s, saying what to check', async (_what, given, key, reason, said) => {
    const refused = exchangeInstallationToken(exchange(given, key));
    await expect(refused).rejects.toMatchObject({ reason, intent: 'stalled' });
    await expect(refused).rejects.toThrow(said);
    await expect(refused).rejects.toThrow('Secret team-a/app');
  });

  it('retries a GitHub that does not answer', async () => {
    const closed = await startGitHubAppServer([]);
    await closed.close();
    const unreachable = exchangeInstallationToken(exchange({ baseUrl: closed.url }));
    await expect(unreachable).rejects.toMatchObject({
      reason: 'GitHubAppUnreachable',
      intent: 'retryable',
      message: `GitHub API ${closed.url} unreachable or not GitHub's API`,
      detail: expect.stringContaining('ECONNREFUSED') as unknown,
    });
  });

  it('goes nowhere the Git policy refuses: the API host is a source host', async () => {
    const refused = exchangeInstallationToken({ ...exchange(), policy: gitPolicy(['github.com']) });
    await expect(refused).rejects.toMatchObject({ reason: 'SourceNotAllowed' });
  });
});
