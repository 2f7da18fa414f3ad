/**
 * The token service of a registry run with distribution's `auth: token` (oci-registry.ts), as Docker
 * Hub, GHCR and Harbor run one: the registry answers 401 with `WWW-Authenticate: Bearer realm=...,
 * service=...,scope=...`, the client GETs the realm with `service` and `scope` and the user's
 * credentials as Basic, and gets `{"token": JWT}` back (the distribution spec's token authentication).
 *
 * The JWT is what distribution v3 verifies (registry/auth/token/token.go): signed ES256 by the key of a
 * certificate in the registry's `rootcertbundle`, that certificate in the `x5c` header (the chain is
 * checked against the bundle; the certificate is its own CA here); `iss` the configured issuer, `aud`
 * the service, `exp` and `nbf` within a minute's leeway, and `access` the actions granted per
 * repository. The registry compares each action a request needs with `access`, so a token with none
 * for a repository is answered 401 `insufficient_scope`.
 *
 * Credentials are checked: wrong ones get 401. Right ones get a token granting, of each scope asked, the
 * actions the user may take on that repository; none get an anonymous token granting pull of the public
 * repositories, as Docker Hub, GHCR and Harbor answer. A token may grant nothing (an empty `access`): the
 * registry, not the token service, then refuses the request.
 */
import { createPrivateKey, randomUUID, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RegistryTokenAuth } from './oci-registry.js';
import { selfSignedCertificate } from './self-signed-certificate.js';

export interface TokenUser {
  readonly password: string;
  /** The repositories the user may pull (`team/app`); `*` names every one. */
  readonly pull: readonly string[];
  /** The repositories the user may push to, likewise. */
  readonly push?: readonly string[];
}

/** One request to the token endpoint, as the token service saw it. */
interface TokenRequest {
  /** The user of the Basic credentials sent; undefined when none were (an anonymous token). */
  readonly username: string | undefined;
  /** Whether a token was issued (no credentials, or right ones). */
  readonly issued: boolean;
  /** The `scope` parameters, each scope on its own. */
  readonly scopes: readonly string[];
}

export interface RegistryTokenServer {
  /** `127.0.0.1:<port>` */
  readonly host: string;
  /** What the registry is started with: startOciRegistry({ token: server.registryAuth }). */
  readonly registryAuth: RegistryTokenAuth;
  /** The token requests so far, in order. */
  readonly requests: readonly TokenRequest[];
  /**
   * Sends every request but the token endpoint's on to the registry at `registryUrl`: the token service
   * on the registry's own host and port, as GHCR serves `ghcr.io/token`. The registry must be started
   * with this server's `registryAuth`, whose realm is then on the registry's host as clients see it.
   */
  front(registryUrl: string): void;
  close(): Promise<void>;
}

const SERVICE = 'applyset-test-registry';
const ISSUER = 'applyset-test-token-service';
const TOKEN_PATH = '/token';
const TOKEN_LIFETIME_S = 300;

interface Access {
  readonly type: 'repository';
  readonly name: string;
  readonly actions: readonly string[];
}

/** The actions of each `repository:NAME:ACTIONS` scope `user` may take; other resource types get none. */
function grant(user: TokenUser, scopes: readonly string[]): Access[] {
  const may = (list: readonly string[] | undefined, name: string) =>
    (list ?? []).some((entry) => entry === '*' || entry === name);
  const granted: Access[] = [];
  for (const scope of scopes) {
    const parts = scope.split(':');
    const type = parts.shift();
    const actions = (parts.pop() ?? '').split(',');
    const name = parts.join(':');
    if (type !== 'repository' || name === '') continue;
    const allowed = actions.filter(
      (action) => (action === 'pull' && may(user.pull, name)) || (action === 'push' && may(user.push, name)),
    );
    if (allowed.length > 0) granted.push({ type, name, actions: allowed });
  }
  return granted;
}

/** A compact JWS of `claims`, ES256 (P-256, the signature as r‖s), with the signing certificate in x5c. */
function signedToken(claims: object, key: KeyObject, certificate: X509Certificate): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = { typ: 'JWT', alg: 'ES256', x5c: [certificate.raw.toString('base64')] };
  const input = `${encode(header)}.${encode(claims)}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** The user and password of a Basic Authorization header; undefined for none or another scheme. */
function basicCredentials(header: string | undefined): { username: string; password: string } | undefined {
  const [scheme, encoded] = (header ?? '').split(' ');
  if (scheme?.toLowerCase() !== 'basic' || encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Passes a request on to `upstream` as it came, and its answer back as it came. */
function pass(upstream: string, request: IncomingMessage, response: ServerResponse): void {
  const onward = forward(
    new URL(request.url ?? '/', upstream),
    { method: request.method, headers: request.headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  onward.on('error', () => response.writeHead(502).end());
  request.pipe(onward);
}

export async function startRegistryTokenServer(options: {
  readonly users: Readonly<Record<string, TokenUser>>;
  /** The repositories an anonymous token may pull. */
  readonly public?: readonly string[];
}): Promise<RegistryTokenServer> {
  const { cert, key } = await selfSignedCertificate();
  const certificate = new X509Certificate(cert);
  const privateKey = createPrivateKey(key);
  const requests: TokenRequest[] = [];
  let upstream: string | undefined;

  const anonymous: TokenUser = { password: '', pull: options.public ?? [] };
  const issue = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://token.invalid');
    const scopes = url.searchParams.getAll('scope').flatMap((scope) => scope.split(' '));
    const sent = basicCredentials(request.headers.authorization);
    const user = sent === undefined ? anonymous : options.users[sent.username];
    const issued = user !== undefined && (sent === undefined || user.password === sent.password);
    requests.push({ username: sent?.username, issued, scopes });
    if (!issued) {
      response.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': 'Basic realm="applyset-test-token-service"',
      });
      response.end(JSON.stringify({ details: 'incorrect username or password' }));
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: ISSUER,
      sub: sent?.username ?? '',
      aud: url.searchParams.get('service') ?? SERVICE,
      exp: now + TOKEN_LIFETIME_S,
      nbf: now,
      iat: now,
      jti: randomUUID(),
      access: grant(user, scopes),
    };
    const token = signedToken(claims, privateKey, certificate);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        token,
        access_token: token,
        expires_in: TOKEN_LIFETIME_S,
        issued_at: new Date(now * 1000).toISOString(),
      }),
    );
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://token.invalid').pathname;
    if (path === TOKEN_PATH && request.method === 'GET') issue(request, response);
    else if (upstream !== undefined) pass(upstream, request, response);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    registryAuth: {
      realm: `http://${host}${TOKEN_PATH}`,
      service: SERVICE,
      issuer: ISSUER,
      certificate: cert,
    },
    requests,
    front(registryUrl) {
      upstream = registryUrl;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}
