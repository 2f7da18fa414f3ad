import type { IssuedToken, TokenExchange } from '../../src/github-app/github-app-client.js';
import type { GitHubApp } from '../../src/github-app/github-app-secret.js';
import {
  createInstallationTokens,
  TOKEN_REFRESH_BEFORE_EXPIRY_MS,
} from '../../src/github-app/installation-tokens.js';
import { gitPolicy, notificationPolicy } from '../../src/net/destination-policy.js';
import { generateAppKey } from '../harness/github-app-server.js';

// The cache alone: the exchange is a function of the test's, which issues a numbered token for an hour
// of the test's clock; the exchange with a server is github-app-client.test.ts's.

const HOUR = 60 * 60_000;
const policy = gitPolicy([]);
const signal = new AbortController().signal;

function testTokens() {
  let clock = 1_780_000_000_000;
  const exchanges: TokenExchange[] = [];
  let release: (() => void) | undefined;
  const tokens = createInstallationTokens({
    now: () => clock,
    exchange: async (exchange): Promise<IssuedToken> => {
      exchanges.push(exchange);
      if (release === undefined) await Promise.resolve();
      else await new Promise<void>((resolve) => (release = resolve));
      return { token: `token-${exchanges.length}`, expiresAtMs: clock + HOUR, installationId: '456' };
    },
  });
  return {
    tokens,
    exchanges,
    advance: (ms: number) => (clock += ms),
    hold: () => (release = () => undefined),
    releaseHeld: () => release?.(),
  };
}

describe('installation tokens', () => {
  const app: GitHubApp = {
    appId: '918273645',
    installation: { id: '456' },
    privateKey: generateAppKey().privateKeyPem,
    baseUrl: 'https://api.github.com',
    from: 'Secret team-a/app',
  };

  it('reuses a token until 5 minutes before it expires, then asks for a new one', async () => {
    const { tokens, exchanges, advance } = testTokens();
    const first = await tokens.tokenFor(app, policy, signal);
    expect(first.token).toBe('token-1');
    advance(HOUR - TOKEN_REFRESH_BEFORE_EXPIRY_MS - 1);
    expect((await tokens.tokenFor(app, policy, signal)).token).toBe('token-1');
    advance(1);
    const second = await tokens.tokenFor(app, policy, signal);
    expect(second.token).toBe('token-2');
    expect(exchanges).toHaveLength(2);
    // The JWT is made at the time of each exchange, by the cache's clock.
    expect(exchanges[1]?.nowMs).toBe((exchanges[0]?.nowMs ?? 0) + HOUR - TOKEN_REFRESH_BEFORE_EXPIRY_MS);
  });

  it('names every token of one installation with one identity, another key with another', async () => {
    const { tokens, advance } = testTokens();
    const first = await tokens.tokenFor(app, policy, signal);
    advance(HOUR);
    const rotated = await tokens.tokenFor(app, policy, signal);
    expect(rotated.token).not.toBe(first.token);
    expect(rotated.identity).toBe(first.identity);
    const otherKey = await tokens.tokenFor(
      { ...app, privateKey: generateAppKey().privateKeyPem },
      policy,
      signal,
    );
    expect(otherKey.identity).not.toBe(first.identity);
    expect(first.identity).toMatch(/^github-app:[0-9a-f]{64}$/);
    expect(first.identity).not.toContain(app.appId);
  });

  it('asks once for callers that come while an exchange is in flight', async () => {
    const { tokens, exchanges, hold, releaseHeld } = testTokens();
    hold();
    const both = Promise.all([tokens.tokenFor(app, policy, signal), tokens.tokenFor(app, policy, signal)]);
    await new Promise((resolve) => setImmediate(resolve));
    releaseHeld();
    const [a, b] = await both;
    expect(a.token).toBe(b.token);
    expect(exchanges).toHaveLength(1);
  });

  it('asks again after a refusal was reported, and under another door kind', async () => {
    const { tokens, exchanges } = testTokens();
    await tokens.tokenFor(app, policy, signal);
    await tokens.tokenFor(app, notificationPolicy([], 'notification'), signal);
    expect(exchanges).toHaveLength(2);
    tokens.forget(app, policy);
    expect((await tokens.tokenFor(app, policy, signal)).token).toBe('token-3');
  });

  it('refuses a key that is no private key before asking anything', async () => {
    const { tokens, exchanges } = testTokens();
    await expect(tokens.tokenFor({ ...app, privateKey: 'nope' }, policy, signal)).rejects.toMatchObject({
      reason: 'GitHubAppKeyInvalid',
    });
    expect(exchanges).toHaveLength(0);
  });
});
