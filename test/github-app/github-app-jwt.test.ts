import { generateKeyPairSync, verify } from 'node:crypto';
import { GitHubAppKeyInvalidError } from '../../src/github-app/github-app-error.js';
import { githubAppJwt, readAppPrivateKey } from '../../src/github-app/github-app-jwt.js';
import { generateAppKey } from '../harness/github-app-server.js';

const NOW_MS = 1_780_000_000_123;
const decode = (part: string | undefined) =>
  JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

describe('githubAppJwt', () => {
  const { privateKeyPem, publicKey } = generateAppKey();
  const key = readAppPrivateKey(privateKeyPem, 'Secret team-a/app');

  it('signs {alg: RS256, typ: JWT} with the app key, verifiable with its public key', () => {
    const [header, claims, signature] = githubAppJwt('12345', key, NOW_MS).split('.');
    expect(decode(header)).toEqual({ alg: 'RS256', typ: 'JWT' });
    const signed = Buffer.from(`${header}.${claims}`);
    expect(verify('sha256', signed, publicKey, Buffer.from(signature ?? '', 'base64url'))).toBe(true);
    const other = generateAppKey().publicKey;
    expect(verify('sha256', signed, other, Buffer.from(signature ?? '', 'base64url'))).toBe(false);
  });

  it("claims iss the app id, iat a minute back and exp nine minutes ahead: within GitHub's ten", () => {
    const claims = decode(githubAppJwt('12345', key, NOW_MS).split('.')[1]);
    const now = Math.floor(NOW_MS / 1000);
    expect(claims).toEqual({ iss: '12345', iat: now - 60, exp: now + 540 });
    expect(Number(claims['exp']) - Number(claims['iat'])).toBeLessThanOrEqual(600);
  });

  it('reads PKCS#8 as well as the PKCS#1 GitHub hands out', () => {
    const pkcs8 = key.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(readAppPrivateKey(pkcs8, 'Secret team-a/app').asymmetricKeyType).toBe('rsa');
  });

  it.each([
    ['no PEM at all', 'not a key', 'is no PEM private key'],
    [
      'a key that is not RSA',
      generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      'of type ec; a GitHub App',
    ],
  ])('refuses %s as GitHubAppKeyInvalid, naming the Secret and not the key', (_what, pem, said) => {
    const refused = (() => {
      try {
        readAppPrivateKey(pem, 'Secret team-a/app');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(GitHubAppKeyInvalidError);
    expect(refused).toMatchObject({ reason: 'GitHubAppKeyInvalid', intent: 'stalled' });
    expect((refused as Error).message).toContain('Secret team-a/app has a githubAppPrivateKey');
    expect((refused as Error).message).toContain(said);
    expect((refused as Error).message).not.toContain(pem.slice(0, 40));
  });
});
