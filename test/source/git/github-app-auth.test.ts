import type { IssuedToken, TokenExchange } from '../../../src/github-app/github-app-client.js';
import type { GitHubApp } from '../../../src/github-app/github-app-secret.js';
import { createInstallationTokens } from '../../../src/github-app/installation-tokens.js';
import { GitAuthError } from '../../../src/git/git-error.js';
import { forgetRefusedToken, resolveGitAuth } from '../../../src/source/git/github-app-auth.js';
import { generateAppKey } from '../../harness/github-app-server.js';

// The app's API host is bound as the Git host is: the Secret's source-hosts must list it before the JWT
// goes anywhere. The exchange is the test's (the one with a server is github-app-client.test.ts's).

describe('resolveGitAuth', () => {
  const app: GitHubApp = {
    appId: '123',
    installation: { id: '456' },
    privateKey: generateAppKey().privateKeyPem,
    baseUrl: 'https://api.github.com',
    from: 'Secret team-a/app',
  };
  const signal = new AbortController().signal;
  const setup = (requireCredentialHosts = false) => {
    const exchanges: TokenExchange[] = [];
    const tokens = createInstallationTokens({
      exchange: (exchange): Promise<IssuedToken> => {
        exchanges.push(exchange);
        const issued = { token: `ghs_${exchanges.length}`, expiresAtMs: Date.now() + 3_600_000 };
        return Promise.resolve({ ...issued, installationId: '456' });
      },
    });
    return {
      exchanges,
      settings: { tokens, allowedHosts: ['github.com', 'api.github.com'], requireCredentialHosts },
    };
  };

  it('sends the installation token as x-access-token, named by the installation, under the Git policy', async () => {
    const { exchanges, settings } = setup();
    const hosts = ['github.com', 'api.github.com'];
    const auth = await resolveGitAuth({ githubApp: app, hosts, from: app.from }, settings, signal);
    expect(auth).toMatchObject({ username: 'x-access-token', password: 'ghs_1', hosts, from: app.from });
    expect((auth as { accessIdentity?: string }).accessIdentity).toMatch(/^github-app:/);
    expect(exchanges[0]?.policy).toMatchObject({ kind: 'git', allowedHosts: settings.allowedHosts });
  });

  it('refuses an API host the Secret does not list, before any exchange', async () => {
    const { exchanges, settings } = setup();
    const refused = resolveGitAuth(
      { githubApp: app, hosts: ['github.com'], from: app.from },
      settings,
      signal,
    );
    await expect(refused).rejects.toMatchObject({ reason: 'CredentialsNotForHost' });
    await expect(refused).rejects.toThrow(
      'Secret team-a/app is for github.com (annotation applyset.dev/source-hosts), not api.github.com',
    );
    expect(exchanges).toHaveLength(0);
  });

  it('refuses a Secret naming no hosts when the controller requires them', async () => {
    const { exchanges, settings } = setup(true);
    await expect(resolveGitAuth({ githubApp: app, from: app.from }, settings, signal)).rejects.toMatchObject({
      reason: 'CredentialsNotForHost',
    });
    expect(exchanges).toHaveLength(0);
  });

  it('passes other credentials as they are', async () => {
    const { settings } = setup();
    const basic = { username: 'u', password: 'p', hosts: ['git.example.com'] };
    expect(await resolveGitAuth(basic, settings, signal)).toBe(basic);
  });

  it('asks for a new token after the Git server refused the last one, not after other failures', async () => {
    const { exchanges, settings } = setup();
    const credentials = { githubApp: app, hosts: ['github.com', 'api.github.com'] };
    await resolveGitAuth(credentials, settings, signal);
    forgetRefusedToken(credentials, settings, new Error('ECONNRESET'));
    await resolveGitAuth(credentials, settings, signal);
    expect(exchanges).toHaveLength(1);
    forgetRefusedToken(credentials, settings, new GitAuthError('https://github.com/acme/a.git', 401));
    expect(await resolveGitAuth(credentials, settings, signal)).toMatchObject({ password: 'ghs_2' });
  });
});
