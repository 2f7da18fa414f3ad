/**
 * The JWT a GitHub App authenticates as, as GitHub documents it ("Generating a JSON Web Token for a
 * GitHub App"): RS256 over the app's private key, `iat` 60 s in the past (clocks drift), `exp` no more
 * than 10 minutes into the future (we take 9, so a clock a little ahead of GitHub's still stays inside
 * its bound), `iss` the app id. Pure: the key and the time are given.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { GitHubAppKeyInvalidError } from './github-app-error.js';
import { GITHUB_APP_KEYS } from './github-app-secret.js';

const BACKDATE_SECONDS = 60;
const EXPIRES_IN_SECONDS = 9 * 60;

/** The RSA private key of `githubAppPrivateKey` (PKCS#1 as GitHub gives it, or PKCS#8). */
export function readAppPrivateKey(pem: string, from: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (error) {
    // OpenSSL's message says nothing of the key itself; it is kept as the cause for the log.
    throw new GitHubAppKeyInvalidError(
      `${from} has a ${GITHUB_APP_KEYS.privateKey} that is no PEM private key`,
      {
        cause: error,
      },
    );
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new GitHubAppKeyInvalidError(
      `${from} has a ${GITHUB_APP_KEYS.privateKey} of type ${key.asymmetricKeyType ?? 'unknown'}; a GitHub App's key is RSA`,
    );
  }
  return key;
}

/** The signed JWT of app `appId` at `nowMs`. */
export function githubAppJwt(appId: string, key: KeyObject, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const header = base64Url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = base64Url(
    JSON.stringify({ iat: now - BACKDATE_SECONDS, exp: now + EXPIRES_IN_SECONDS, iss: appId }),
  );
  const signature = sign('sha256', Buffer.from(`${header}.${claims}`), key).toString('base64url');
  return `${header}.${claims}.${signature}`;
}

function base64Url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
