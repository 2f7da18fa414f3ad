import { createPrivateKey, sign } from 'node:crypto';
import { generateAppKey, startGitHubAppServer, type GitHubAppServer } from '../harness/github-app-server.js';

// The stand-in for GitHub is only worth its tests if it refuses what GitHub refuses: a JWT not signed by
// the app's key, of another algorithm, from the future, expired, or living longer than 10 minutes.

describe("the harness's stand-in for GitHub's App endpoints", () => {
  const appKey = generateAppKey();
  const privateKey = createPrivateKey(appKey.privateKeyPem);
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

  const jwt = (claims: object, header: object = { alg: 'RS256', typ: 'JWT' }, key = privateKey) => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const signed = `${encode(header)}.${encode(claims)}`;
    return `${signed}.${sign('sha256', Buffer.from(signed), key).toString('base64url')}`;
  };
  const exchange = (token: string) =>
    fetch(`${github.url}/app/installations/456/access_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json' },
    });
  const now = () => Math.floor(Date.now() / 1000);

  it('issues a token for a JWT GitHub would take, which the Git server then accepts until it expires', async () => {
    const answer = await exchange(jwt({ iat: now() - 60, exp: now() + 540, iss: '123' }));
    expect(answer.status).toBe(201);
    const { token, expires_at } = (await answer.json()) as { token: string; expires_at: string };
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now() + 59 * 60_000);
    expect(github.gitAuth.accepts('x-access-token', token)).toBe(true);
    expect(github.gitAuth.accepts('git', token)).toBe(false);
    expect(github.gitAuth.accepts('x-access-token', 'ghs_made_up')).toBe(false);
  });

  it.each([
    ['signed by another key', { iat: -60, exp: 540 }, undefined, generateAppKey().privateKeyPem],
    ['of another algorithm', { iat: -60, exp: 540 }, { alg: 'none', typ: 'JWT' }, undefined],
    ['issued in the future', { iat: 120, exp: 600 }, undefined, undefined],
    ['expired', { iat: -700, exp: -100 }, undefined, undefined],
    ['living longer than 10 minutes', { iat: -60, exp: 660 }, undefined, undefined],
  ])('answers 401 to a JWT %s', async (_what, times, header, otherKey) => {
    const claims = { iat: now() + times.iat, exp: now() + times.exp, iss: '123' };
    const key = otherKey === undefined ? privateKey : createPrivateKey(otherKey);
    expect((await exchange(jwt(claims, header, key))).status).toBe(401);
  });
});
