/**
 * GitHub's two App endpoints a token takes, called through the outbound door: `GET
 * /orgs/{owner}/installation` (then `/users/{owner}/installation`) to find the installation when the
 * Secret names its owner, and `POST /app/installations/{id}/access_tokens` to exchange the app's JWT for
 * an installation token (`201 {token, expires_at}`), as GitHub's REST API documents them. Answers are a
 * few hundred bytes: 64 KiB is read at most.
 */
import type { KeyObject } from 'node:crypto';
import { IntentError } from '../errors/intent-error.js';
import { messageOf } from '../errors/message-of.js';
import { isAbortError } from '../errors/rethrow-abort.js';
import { readJsonValue } from '../input/read-json-value.js';
import type { DestinationPolicy } from '../net/destination-policy.js';
import { sendOutbound } from '../net/outbound-request.js';
import {
  GitHubAppAuthFailedError,
  GitHubAppInstallationNotFoundError,
  GitHubAppUnreachableError,
} from './github-app-error.js';
import { githubAppJwt } from './github-app-jwt.js';
import type { GitHubApp } from './github-app-secret.js';

const MAX_ANSWER_BYTES = 64 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;

/** One exchange: the app, its key read, the door's policy for its API host, and the time of the JWT. */
export interface TokenExchange {
  readonly app: GitHubApp;
  readonly key: KeyObject;
  readonly policy: DestinationPolicy;
  readonly nowMs: number;
  readonly signal: AbortSignal;
}

export interface IssuedToken {
  readonly token: string;
  readonly expiresAtMs: number;
  /** The installation it is of: the Secret's, or the one looked up by owner. */
  readonly installationId: string;
}

/** An installation token of the app. Throws the errors of github-app-error.ts, the door's refusals, or an abort. */
export async function exchangeInstallationToken(exchange: TokenExchange): Promise<IssuedToken> {
  const jwt = githubAppJwt(exchange.app.appId, exchange.key, exchange.nowMs);
  const { installation } = exchange.app;
  const installationId =
    'id' in installation ? installation.id : await findInstallation(exchange, jwt, installation.owner);
  const path = `/app/installations/${encodeURIComponent(installationId)}/access_tokens`;
  const answer = await callGitHub(exchange, 'POST', path, jwt);
  if (answer.status !== 201) throw statusError(exchange, answer.status, `installation ${installationId}`);
  const body = jsonOf(exchange, answer.body) as { token?: unknown; expires_at?: unknown };
  const expiresAtMs = typeof body.expires_at === 'string' ? Date.parse(body.expires_at) : Number.NaN;
  if (typeof body.token !== 'string' || body.token === '' || Number.isNaN(expiresAtMs)) {
    throw notGitHub(exchange, 'an access token answer without token or expires_at');
  }
  return { token: body.token, expiresAtMs, installationId };
}

/** The installation of the app on an organisation, else on a user, as GitHub looks either up. */
async function findInstallation(exchange: TokenExchange, jwt: string, owner: string): Promise<string> {
  for (const kind of ['orgs', 'users'] as const) {
    const answer = await callGitHub(
      exchange,
      'GET',
      `/${kind}/${encodeURIComponent(owner)}/installation`,
      jwt,
    );
    if (answer.status === 404) continue;
    if (answer.status !== 200) throw statusError(exchange, answer.status, `the installation on ${owner}`);
    const id = (jsonOf(exchange, answer.body) as { id?: unknown }).id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
      throw notGitHub(exchange, 'an installation answer without a numeric id');
    }
    return String(id);
  }
  throw new GitHubAppInstallationNotFoundError(
    `GitHub App ${exchange.app.appId} of ${exchange.app.from} is installed neither on an organisation nor on a user named ${owner} (HTTP 404 from ${exchange.app.baseUrl}): install it there, or set githubAppInstallationID`,
  );
}

async function callGitHub(
  exchange: TokenExchange,
  method: 'GET' | 'POST',
  path: string,
  jwt: string,
): Promise<{ readonly status: number; readonly body: Buffer }> {
  try {
    const { status, body } = await sendOutbound({
      url: new URL(`${exchange.app.baseUrl}${path}`),
      method,
      policy: exchange.policy,
      headers: {
        authorization: `Bearer ${jwt}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        // GitHub refuses requests without a User-Agent.
        'user-agent': 'applyset-controller',
      },
      signal: exchange.signal,
      maxBodyBytes: MAX_ANSWER_BYTES,
      idleTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    return { status, body };
  } catch (error) {
    // The door's refusals and bounds are said as they are. The signal is the exchange's own deadline
    // (installation-tokens.ts): its abort is GitHub's silence.
    if (error instanceof IntentError) throw error;
    const why = exchange.signal.aborted || isAbortError(error) ? 'no answer in time' : messageOf(error);
    throw new GitHubAppUnreachableError(exchange.app.baseUrl, why, { cause: error });
  }
}

function statusError(exchange: TokenExchange, status: number, what: string): IntentError {
  const { appId, from, baseUrl } = exchange.app;
  switch (status) {
    case 401:
      return new GitHubAppAuthFailedError(
        `GitHub (${baseUrl}) did not accept the JWT of GitHub App ${appId} (HTTP 401): the private key is not one of that app's; check githubAppID and githubAppPrivateKey in ${from}`,
      );
    case 403:
      return new GitHubAppAuthFailedError(
        `GitHub (${baseUrl}) refused GitHub App ${appId} a token for ${what} (HTTP 403): the installation may be suspended; check it in the organisation's settings (${from})`,
      );
    case 404:
      return new GitHubAppInstallationNotFoundError(
        `GitHub (${baseUrl}) knows no ${what} of GitHub App ${appId} (HTTP 404): check githubAppInstallationID in ${from}, and that the app is installed`,
      );
    default:
      return new GitHubAppUnreachableError(baseUrl, `HTTP ${status} for ${what}`);
  }
}

function jsonOf(exchange: TokenExchange, body: Buffer): unknown {
  try {
    const value = readJsonValue(body.toString('utf8'), `an answer of ${exchange.app.baseUrl}`, 'forge-api');
    if (typeof value === 'object' && value !== null) return value;
  } catch (error) {
    throw notGitHub(exchange, messageOf(error));
  }
  throw notGitHub(exchange, 'an answer that is no JSON object');
}

function notGitHub(exchange: TokenExchange, detail: string): GitHubAppUnreachableError {
  return new GitHubAppUnreachableError(exchange.app.baseUrl, detail);
}
