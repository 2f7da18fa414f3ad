import type { NotificationConfig } from '../../src/notify/notification-spec.js';
import { createInstallationTokens } from '../../src/github-app/installation-tokens.js';
import { receiverAppToken } from '../../src/notify/receiver-app-token.js';
import { generateAppKey, startGitHubAppServer, type GitHubAppServer } from '../harness/github-app-server.js';

// A github Notification's Secret holding a GitHub App: its installation token, asked of the harness's
// stand-in for GitHub (there is no GitHub here), is the Bearer token of the commit statuses.

const config: NotificationConfig = {
  namespace: 'team-a',
  name: 'statuses',
  applySetNames: [],
  matchLabels: {},
  severities: [],
  states: [],
  provider: 'github',
  secretName: 'github-statuses',
};
const what = 'Secret team-a/github-statuses';

describe('receiverAppToken', () => {
  const appKey = generateAppKey();
  let github: GitHubAppServer;
  beforeAll(async () => {
    github = await startGitHubAppServer([
      {
        appId: '123',
        publicKey: appKey.publicKey,
        installations: [{ id: 456, owner: 'acme', ownerType: 'Organization' }],
      },
    ]);
  });
  afterAll(() => github?.close());

  const data = () => ({
    githubAppID: '123',
    githubAppInstallationID: '456',
    githubAppPrivateKey: appKey.privateKeyPem,
  });
  const apps = (internalHosts: string[] = ['127.0.0.1']) => ({
    tokens: createInstallationTokens(),
    internalHosts,
  });
  const signal = new AbortController().signal;

  it('asks the address (the API base) for a token of the installation', async () => {
    const secret = { data: data(), address: github.url, hosts: ['127.0.0.1'] };
    const found = await receiverAppToken(secret, what, config, apps(), signal);
    expect(found).toEqual({ token: expect.stringMatching(/^ghs_/) as unknown });
    expect(github.requests.at(-1)).toMatchObject({
      path: '/app/installations/456/access_tokens',
      status: 201,
    });
  });

  it('is none for a Secret with a token, or a provider other than github', async () => {
    const secret = { data: { token: 't' }, address: github.url, hosts: ['127.0.0.1'] };
    expect(await receiverAppToken(secret, what, config, apps(), signal)).toBeUndefined();
    const app = { ...secret, data: data() };
    expect(
      await receiverAppToken(app, what, { ...config, provider: 'gitea' }, apps(), signal),
    ).toBeUndefined();
  });

  it('says why no token was had, and sends nothing where it may not', async () => {
    const before = github.requests.length;
    const elsewhere = {
      data: { ...data(), githubAppBaseURL: 'https://api.github.com' },
      address: github.url,
    };
    expect(
      await receiverAppToken({ ...elsewhere, hosts: ['127.0.0.1'] }, what, config, apps(), signal),
    ).toEqual({
      problem: expect.stringContaining(
        'is for 127.0.0.1 (annotation applyset.dev/source-hosts), not api.github.com',
      ) as unknown,
    });
    // A tenant's Notification may not reach loopback unless --internal-notification-hosts names it.
    const loopback = { data: data(), address: github.url, hosts: ['127.0.0.1'] };
    expect(await receiverAppToken(loopback, what, config, apps([]), signal)).toEqual({
      problem: expect.stringContaining('loopback') as unknown,
    });
    const wrongKey = {
      ...loopback,
      data: { ...data(), githubAppPrivateKey: generateAppKey().privateKeyPem },
    };
    expect(await receiverAppToken(wrongKey, what, config, apps(), signal)).toEqual({
      problem: expect.stringContaining('HTTP 401') as unknown,
    });
    expect(github.requests.slice(before).filter((r) => r.status === 201)).toEqual([]);
  });
});
