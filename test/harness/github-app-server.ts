/**
 * A stand-in for GitHub's REST API, for GitHub App tests: there is no GitHub here, so this small server
 * on 127.0.0.1 implements the endpoints a GitHub App token takes, as GitHub documents them ("REST API
 * endpoints for GitHub Apps"):
 *
 * - `GET /orgs/{org}/installation` and `GET /users/{username}/installation`: the app's installation on
 *   an organisation or a user account (200 with its `id`), else 404;
 * - `POST /app/installations/{installation_id}/access_tokens`: `201 {token, expires_at}`, else 404;
 * - `POST /repos/{owner}/{repo}/statuses/{sha}` with an installation token as Bearer: the commit status
 *   (201), recorded, for tests of commit statuses marked with an app's token.
 *
 * The app endpoints authenticate the app as GitHub does: a JWT in `Authorization: Bearer`, whose RS256
 * signature is verified against the public key of the app its `iss` names, `iat` no later than 60 s from
 * now (GitHub's allowance for skew), `exp` in the future and at most 10 minutes after `iat`; anything
 * else is answered 401. Everything after the token is real: the Git server (git-server.ts) is told, by
 * `gitAuth`, to accept `x-access-token:<token>` for the tokens issued here until they expire.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GitServerCredentialCheck } from './git-http-backend.js';

export interface TestGitHubApp {
  readonly appId: string;
  /** The key GitHub keeps of the app: the public half of the one the app signs with. */
  readonly publicKey: KeyObject;
  readonly installations: readonly TestInstallation[];
}

interface TestInstallation {
  readonly id: number;
  /** The organisation or user the app is installed on. */
  readonly owner: string;
  readonly ownerType: 'Organization' | 'User';
}

/** One request the server answered. */
interface GitHubRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

interface CommitStatusPosted {
  readonly repository: string;
  readonly sha: string;
  readonly state: string;
  readonly context: string;
  readonly description: string;
}

export interface GitHubAppServer {
  /** `http://127.0.0.1:<port>`: the API base, as `githubAppBaseURL`. */
  readonly url: string;
  readonly requests: readonly GitHubRequest[];
  /** Tokens issued so far (successful exchanges). */
  exchanges(): number;
  /** How long the next tokens live (GitHub: an hour). */
  setTokenLifetime(ms: number): void;
  /** For startGitServer({ auth }): accepts a token issued here, unexpired, with username `x-access-token`. */
  readonly gitAuth: GitServerCredentialCheck;
  readonly statuses: readonly CommitStatusPosted[];
  close(): Promise<void>;
}

/** An app's key pair as GitHub hands out its private key: PKCS#1 PEM. */
export function generateAppKey(): { readonly privateKeyPem: string; readonly publicKey: KeyObject } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return { privateKeyPem, publicKey: createPublicKey(privateKey) };
}

const SKEW_SECONDS = 60;
const MAX_JWT_LIFETIME_SECONDS = 600;

export async function startGitHubAppServer(apps: readonly TestGitHubApp[]): Promise<GitHubAppServer> {
  const requests: GitHubRequest[] = [];
  const statuses: CommitStatusPosted[] = [];
  const tokens = new Map<string, { readonly installation: number; readonly expiresAtMs: number }>();
  let lifetimeMs = 60 * 60_000;
  let issued = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const body = await readBody(req);
    const answer = (status: number, value: unknown) => {
      requests.push({ method, path, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(value));
    };
    const notFound = () =>
      answer(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    const statusPath = /^\/repos\/([^/]+)\/([^/]+)\/statuses\/([0-9a-f]{40})$/.exec(path);
    if (method === 'POST' && statusPath !== null) {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const known = token === undefined ? undefined : tokens.get(token);
      if (known === undefined || known.expiresAtMs <= Date.now()) {
        return answer(401, { message: 'Bad credentials' });
      }
      const posted = JSON.parse(body) as Record<string, string>;
      statuses.push({
        repository: `${statusPath[1]}/${statusPath[2]}`,
        sha: statusPath[3] ?? '',
        state: posted['state'] ?? '',
        context: posted['context'] ?? '',
        description: posted['description'] ?? '',
      });
      return answer(201, { state: posted['state'], context: posted['context'] });
    }
    const app = authenticatedApp(req.headers.authorization, apps);
    if (typeof app === 'string') return answer(401, { message: app });
    const lookup = /^\/(orgs|users)\/([^/]+)\/installation$/.exec(path);
    if (method === 'GET' && lookup !== null) {
      const ownerType = lookup[1] === 'orgs' ? 'Organization' : 'User';
      const found = app.installations.find(
        (installation) =>
          installation.ownerType === ownerType &&
          installation.owner.toLowerCase() === decodeURIComponent(lookup[2] ?? '').toLowerCase(),
      );
      if (found === undefined) return notFound();
      return answer(200, {
        id: found.id,
        app_id: Number(app.appId),
        account: { login: found.owner, type: found.ownerType },
      });
    }
    const exchange = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (method === 'POST' && exchange !== null) {
      const installation = app.installations.find((candidate) => String(candidate.id) === exchange[1]);
      if (installation === undefined) return notFound();
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      const expiresAtMs = Date.now() + lifetimeMs;
      tokens.set(token, { installation: installation.id, expiresAtMs });
      issued += 1;
      return answer(201, {
        token,
        // GitHub gives the time to the second.
        expires_at: new Date(Math.floor(expiresAtMs / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
        permissions: { contents: 'read', metadata: 'read', statuses: 'write' },
        repository_selection: 'all',
      });
    }
    return notFound();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    statuses,
    exchanges: () => issued,
    setTokenLifetime: (ms) => {
      lifetimeMs = ms;
    },
    gitAuth: {
      accepts: (username, password) => {
        const known = tokens.get(password);
        return username === 'x-access-token' && known !== undefined && known.expiresAtMs > Date.now();
      },
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The app whose JWT the header carries, verified as GitHub verifies it; else GitHub's 401 message. GitHub
 * takes `iss` as the app id (a number, or its string) or the client id.
 */
function authenticatedApp(
  header: string | undefined,
  apps: readonly TestGitHubApp[],
): TestGitHubApp | string {
  const jwt = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
  const parts = jwt?.split('.') ?? [];
  if (parts.length !== 3) return 'A JSON web token could not be decoded';
  const [encodedHeader = '', encodedClaims = '', signature = ''] = parts;
  let joseHeader: { alg?: unknown };
  let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
  try {
    joseHeader = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as typeof joseHeader;
    claims = JSON.parse(Buffer.from(encodedClaims, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    return 'A JSON web token could not be decoded';
  }
  if (joseHeader.alg !== 'RS256') return 'A JSON web token could not be decoded';
  const app = apps.find((candidate) => candidate.appId === String(claims.iss));
  if (app === undefined) return "'Issuer' claim ('iss') must be an Integer";
  const signed = Buffer.from(`${encodedHeader}.${encodedClaims}`);
  if (!verify('sha256', signed, app.publicKey, Buffer.from(signature, 'base64url'))) {
    return 'A JSON web token could not be decoded';
  }
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') {
    return "'Issued at' and 'Expiration time' claims are required";
  }
  if (claims.iat > now + SKEW_SECONDS)
    return "'Issued at' claim ('iat') must be an Integer representing a time in the past";
  if (claims.exp <= now)
    return "'Expiration time' claim ('exp') must be a numeric value representing the future time";
  if (claims.exp - claims.iat > MAX_JWT_LIFETIME_SECONDS)
    return "'Expiration time' claim ('exp') is too far in the future";
  return app;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
