/**
 * A Helm repository read over HTTP(S) through the outbound door, as helm reads one: GET `index.yaml` and
 * a chart's archive, with Basic credentials sent up front (helm's `--username`/`--password`) to the
 * repository's own origin only. A redirect is followed through the door as the OCI registry client
 * follows one (src/source/oci/registry-client.ts), without the Authorization header once it leaves the
 * origin; an archive elsewhere gets no credentials either, as helm without `--pass-credentials`. Every
 * answer is read whole within its bound.
 */
import { IntentError } from '../../errors/intent-error.js';
import { isAbortError } from '../../errors/rethrow-abort.js';
import { messageOf } from '../../errors/message-of.js';
import type { DestinationPolicy } from '../../net/destination-policy.js';
import { tlsFailureOf } from '../../net/tls-certificate-error.js';
import { outboundConnection, type SourceConnection } from '../source-connection.js';
import { sendOutbound } from '../../net/outbound-request.js';
import {
  HelmRepositoryAuthError,
  HelmRepositoryInvalidError,
  HelmRepositoryUnreachableError,
} from './helm-repository-error.js';

export interface HelmGet {
  readonly url: URL;
  /** The repository's origin: only a request there carries `authorization`. */
  readonly origin: string;
  readonly authorization: string | undefined;
  readonly maxBytes: number;
  /** What is fetched, for messages: `https://charts.example.com: index.yaml`. */
  readonly what: string;
  /** spec.source.certSecretRef's TLS material, proxySecretRef's proxy. */
  readonly connection?: SourceConnection | undefined;
}

const MAX_REDIRECTS = 5;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The body of a 200 to GET `request.url`. Throws HelmRepositoryAuthError (401, 403),
 * HelmRepositoryInvalidError (404 and other answers), HelmRepositoryUnreachableError (no answer, 429,
 * 5xx), the door's refusals as they are, and ResponseTooLargeError past `maxBytes`.
 */
export async function helmGet(
  policy: DestinationPolicy,
  request: HelmGet,
  signal: AbortSignal,
): Promise<Buffer> {
  let target = request.url;
  try {
    for (let hop = 0; ; hop += 1) {
      const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'applyset-controller' };
      if (request.authorization !== undefined && target.origin === request.origin) {
        headers['authorization'] = request.authorization;
      }
      const answer = await sendOutbound({
        url: target,
        method: 'GET',
        policy,
        ...outboundConnection(request.connection),
        headers,
        signal,
        maxBodyBytes: request.maxBytes,
        idleTimeoutMs: REQUEST_TIMEOUT_MS,
      });
      const location = answer.response.headers.location;
      if (answer.status >= 300 && answer.status < 400 && location !== undefined) {
        if (hop >= MAX_REDIRECTS) {
          throw new HelmRepositoryUnreachableError(`${request.what}: more than ${MAX_REDIRECTS} redirects`);
        }
        target = new URL(location, target);
        continue;
      }
      if (answer.status === 200) return answer.body;
      throw statusError(answer.status, request.what, request.authorization !== undefined);
    }
  } catch (error) {
    // The door's refusals and bounds (ResponseTooLargeError among them) are said as they are.
    if (error instanceof IntentError || isAbortError(error)) throw error;
    throw (
      tlsFailureOf(error, target.host) ??
      new HelmRepositoryUnreachableError(`${request.what}: no answer (${messageOf(error)})`, {
        cause: error,
      })
    );
  }
}

/** `Basic …` of a username and password. */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** What a status other than 200 means: 401/403 refused, 429/5xx down, anything else not a chart repository. */
function statusError(status: number, what: string, withCredentials: boolean): IntentError {
  if (status === 401 || status === 403) {
    return new HelmRepositoryAuthError(
      withCredentials
        ? `${what}: the repository refused the credentials of spec.source.secretRef (${status})`
        : `${what}: the repository asks for credentials (${status}); name a Secret with username and password in spec.source.secretRef`,
    );
  }
  if (status === 429 || status >= 500) {
    return new HelmRepositoryUnreachableError(`${what}: the repository answered ${status}`);
  }
  return new HelmRepositoryInvalidError(`${what}: the repository answered ${status}; nothing was applied`);
}
