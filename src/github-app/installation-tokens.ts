/**
 * Installation tokens of GitHub Apps, each asked of GitHub once and used until 5 minutes before it
 * expires (GitHub's last an hour), so a fleet of ApplySets on one app costs GitHub one exchange an hour
 * per installation, not one per reconcile. Exchanges of one key run once at a time (single flight).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { raceSignal } from '../git/abortable-http-client.js';
import { LruMap } from '../kube/lru-map.js';
import type { DestinationPolicy } from '../net/destination-policy.js';
import { exchangeInstallationToken, type IssuedToken, type TokenExchange } from './github-app-client.js';
import { readAppPrivateKey } from './github-app-jwt.js';
import type { GitHubApp } from './github-app-secret.js';

/**
 * A token is not used in its last 5 minutes: a fetch that starts with it must not outlive it.
 * @internal test seam: the cache tests step their clock to it
 */
export const TOKEN_REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;
const MAX_CACHED = 1000;
/**
 * An exchange is shared by every caller of its key, so it has its own deadline rather than the first
 * caller's signal: a reconcile that gives up must not fail the others' wait.
 */
const EXCHANGE_TIMEOUT_MS = 60_000;

interface InstallationToken {
  readonly token: string;
  /**
   * Names the app installation without holding its key or token: the same for every token of one
   * installation (see identityOf).
   */
  readonly identity: string;
}

export interface InstallationTokens {
  /** A token of the app's installation, asked of its API under `policy` when none is cached. */
  tokenFor(app: GitHubApp, policy: DestinationPolicy, signal: AbortSignal): Promise<InstallationToken>;
  /** The server refused the token (revoked, the installation's access changed): the next call asks anew. */
  forget(app: GitHubApp, policy: DestinationPolicy): void;
}

interface InstallationTokensOptions {
  /** Default Date.now: the JWT's time and the token's age. */
  readonly now?: () => number;
  /** Default the call to GitHub (github-app-client.ts); tests of the cache give their own. */
  readonly exchange?: (exchange: TokenExchange) => Promise<IssuedToken>;
}

export function createInstallationTokens(options: InstallationTokensOptions = {}): InstallationTokens {
  const now = options.now ?? Date.now;
  const exchange = options.exchange ?? exchangeInstallationToken;
  const identityKey = randomBytes(32);
  const cached = new LruMap<string, IssuedToken & { readonly identity: string }>(MAX_CACHED);
  const flights = new Map<string, Promise<InstallationToken>>();

  const ask = async (key: string, app: GitHubApp, policy: DestinationPolicy) => {
    const privateKey = readAppPrivateKey(app.privateKey, app.from);
    const signal = AbortSignal.timeout(EXCHANGE_TIMEOUT_MS);
    const issued = await exchange({ app, key: privateKey, policy, nowMs: now(), signal });
    const identity = identityOf(identityKey, app, issued.installationId);
    cached.set(key, { ...issued, identity });
    return { token: issued.token, identity };
  };

  return {
    tokenFor(app, policy, signal) {
      const key = cacheKeyOf(app, policy);
      const hit = cached.get(key);
      if (hit !== undefined && now() < hit.expiresAtMs - TOKEN_REFRESH_BEFORE_EXPIRY_MS) {
        return Promise.resolve({ token: hit.token, identity: hit.identity });
      }
      let flight = flights.get(key);
      if (flight === undefined) {
        const started = ask(key, app, policy).finally(() => flights.delete(key));
        flights.set(key, started);
        flight = started;
      }
      return raceSignal(flight, signal);
    },
    forget(app, policy) {
      cached.delete(cacheKeyOf(app, policy));
    },
  };
}

/**
 * One cache entry per app, installation (or owner looked up), key and API base; and per kind of door, so
 * a token asked under the notification policy never spares a Git source the check of
 * `--allowed-source-hosts`. The key is hashed: no cache key holds it.
 */
function cacheKeyOf(app: GitHubApp, policy: DestinationPolicy): string {
  return JSON.stringify([policy.kind, app.appId, app.installation, keyHashOf(app), app.baseUrl]);
}

function keyHashOf(app: GitHubApp): string {
  return createHash('sha256').update(app.privateKey).digest('hex');
}

/**
 * The identity a Git source's access proofs and shared fetches know the caller by (src/git/access-proofs.ts).
 * Credentials are named by an HMAC of their username and password; an installation token changes every
 * hour, and named that way each new token would look like a stranger: its first fetch could not be
 * answered from the cache, a fetch in flight with the old token would not be shared, and proofs would
 * pile up. What a token may read is what its installation may read, so the installation is the identity:
 * an HMAC (under a key drawn at start, like credentialIdentity's) of the app, the installation, the
 * private key and the API base. Only a holder of the private key gets a token at all, so a Secret with
 * the same app and installation but another key is another identity; and a revoked installation still
 * loses its proofs, since the server's refusal forgets them by identity.
 */
function identityOf(identityKey: Buffer, app: GitHubApp, installationId: string): string {
  const named = JSON.stringify([app.appId, installationId, keyHashOf(app), app.baseUrl]);
  return `github-app:${createHmac('sha256', identityKey).update(named).digest('hex')}`;
}
