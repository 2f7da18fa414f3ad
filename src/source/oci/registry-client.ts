/**
 * An OCI registry read as the distribution spec defines it, through the outbound door: a manifest by
 * tag or digest, a blob streamed and checked against its digest, the repository's tags. A 401 is answered as the registry's
 * challenge asks (Basic, or a Bearer token from its token service), with credentials sent only to a
 * host the pull Secret names; a redirect (blob storage) is followed through the door, without the
 * Authorization header when it leaves the origin. Every answer is bounded.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { IntentError } from '../../errors/intent-error.js';
import { isAbortError } from '../../errors/rethrow-abort.js';
import { messageOf } from '../../errors/message-of.js';
import { readJsonValue } from '../../input/read-json-value.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import type { DestinationPolicy } from '../../net/destination-policy.js';
import { tlsFailureOf } from '../../net/tls-certificate-error.js';
import { outboundConnection, type SourceConnection } from '../source-connection.js';
import { openOutbound, sendOutbound } from '../../net/outbound-request.js';
import { checkedBlob } from './checked-blob.js';
import { listRegistryTags } from './list-registry-tags.js';
import type { OciRepository } from './oci-reference.js';
import { parseChallenge, tokenUrl, type Challenge } from './registry-challenge.js';
import {
  ArtifactInvalidError,
  ArtifactNotFoundError,
  RegistryAuthError,
  RegistryUnreachableError,
} from './registry-error.js';

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

export interface RegistryClientOptions {
  readonly policy: DestinationPolicy;
  /** spec.source.certSecretRef's TLS material and proxySecretRef's proxy, on every request. */
  readonly connection?: SourceConnection | undefined;
  /** `http://` rather than `https://` (spec.source.insecure). */
  readonly plainHttp: boolean;
  /** What the pull Secret holds for `host` (`host` or `host:port`); sent to no other host. */
  readonly credentialsFor: (host: string) => RegistryCredentials | undefined;
  /** Completes `HOST asks for credentials, and …`; default: the pull Secret of spec.source.secretRef. */
  readonly noCredentials?: (host: string) => string;
  /** How long one request may wait for its answer's headers. Default 30 s. */
  readonly requestTimeoutMs?: number;
}

interface FetchedManifest {
  /** `sha256:…` of the bytes the registry sent. */
  readonly digest: string;
  readonly mediaType: string;
  readonly manifest: JsonObject;
}

export interface RegistryClient {
  /** The manifest at `reference` (a tag or a digest); ArtifactNotFoundError when there is none. */
  manifest(reference: string, signal: AbortSignal): Promise<FetchedManifest>;
  /** The same, undefined for a 404 (a signature that was never pushed). */
  manifestIfPresent(reference: string, signal: AbortSignal): Promise<FetchedManifest | undefined>;
  /**
   * The blob `digest` of `size` bytes, streamed; the stream throws ArtifactInvalidError when what came
   * is not `size` bytes of that digest (after the last chunk: take nothing of it as final before).
   */
  blob(digest: string, size: number, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /**
   * The repository's tags, every page the registry's `Link` header names, within the bounds of
   * list-registry-tags.ts. `pageSize` is the `n` asked for a page; the registry's own when unset.
   */
  tags(signal: AbortSignal, pageSize?: number): Promise<string[]>;
}

const OCI_MANIFEST_TYPES: readonly string[] = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_TOKEN_BYTES = 64 * 1024;
const MAX_REDIRECTS = 5;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

interface Answer {
  readonly status: number;
  readonly response: IncomingMessage;
  readonly body?: Buffer;
}

/** One client's state: where it asks, and the Authorization its last challenge earned. */
interface Session {
  readonly repository: OciRepository;
  readonly options: RegistryClientOptions;
  /** `https://host/v2/repository` */
  readonly base: string;
  /** `oci://host/repository`, for messages. */
  readonly where: string;
  authorization: string | undefined;
  /** Where the Bearer token of `authorization` came from, and for whom; undefined for Basic. */
  token: { readonly host: string; readonly username: string | undefined } | undefined;
}

export function createRegistryClient(
  repository: OciRepository,
  options: RegistryClientOptions,
): RegistryClient {
  const session: Session = {
    repository,
    options,
    base: `${options.plainHttp ? 'http' : 'https'}://${repository.host}/v2/${repository.repository}`,
    where: `oci://${repository.host}/${repository.repository}`,
    authorization: undefined,
    token: undefined,
  };
  return {
    manifestIfPresent: (reference, signal) => fetchManifest(session, reference, signal),
    async manifest(reference, signal) {
      const found = await fetchManifest(session, reference, signal);
      if (found === undefined) {
        throw new ArtifactNotFoundError(`${session.where}: ${reference} is not in the registry (404)`);
      }
      return found;
    },
    async blob(digest, size, signal) {
      const answer = await ask(session, `/blobs/${digest}`, '*/*', signal);
      if (answer.status !== 200) {
        answer.response.resume();
        throw statusError(answer.status, `${session.where}: layer ${digest}`);
      }
      return checkedBlob(answer.response, { digest, size, where: session.where });
    },
    tags: (signal, pageSize) =>
      listRegistryTags(
        async (path, maxBytes) => {
          const answer = await ask(session, path, 'application/json', signal, maxBytes);
          const what = `${session.where}: the tag list`;
          if (answer.status !== 200) throw statusError(answer.status, what);
          const body = readRegistryJson(answer.body ?? Buffer.alloc(0), what);
          return { body, link: answer.response.headers['link'] };
        },
        { base: session.base, where: session.where, ...(pageSize === undefined ? {} : { pageSize }) },
      ),
  };
}

/** One GET, its redirects followed through the door; buffered up to `maxBytes`, else streamed. */
async function get(
  session: Session,
  url: URL,
  accept: string,
  signal: AbortSignal,
  maxBytes: number | undefined,
): Promise<Answer> {
  let target = url;
  for (let hop = 0; ; hop += 1) {
    const headers: Record<string, string> = { accept, 'user-agent': 'applyset-controller' };
    // Never past the registry's origin: blob storage gets a signed URL, not the registry's token.
    if (session.authorization !== undefined && target.origin === url.origin) {
      headers['authorization'] = session.authorization;
    }
    const request = {
      url: target,
      method: 'GET',
      policy: session.options.policy,
      ...outboundConnection(session.options.connection),
      headers,
      signal,
      idleTimeoutMs: session.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    };
    const answer: Answer =
      maxBytes === undefined
        ? await openOutbound(request).then(({ response }) => ({ status: response.statusCode ?? 0, response }))
        : await sendOutbound({ ...request, maxBodyBytes: maxBytes });
    const location = answer.response.headers.location;
    if (answer.status < 300 || answer.status >= 400 || location === undefined) return answer;
    answer.response.resume();
    if (hop >= MAX_REDIRECTS) {
      throw new RegistryUnreachableError(`${session.where}: more than ${MAX_REDIRECTS} redirects`);
    }
    target = new URL(location, target);
  }
}

/** A request with the registry's challenge answered once. */
async function ask(
  session: Session,
  path: string,
  accept: string,
  signal: AbortSignal,
  maxBytes?: number,
): Promise<Answer> {
  const url = new URL(`${session.base}${path}`);
  try {
    const first = await get(session, url, accept, signal, maxBytes);
    if (first.status !== 401) return first;
    first.response.resume();
    const challenge = parseChallenge(first.response.headers['www-authenticate']);
    session.authorization = await authorize(session, challenge, signal);
    const retried = await get(session, url, accept, signal, maxBytes);
    if (retried.status !== 401 || session.token === undefined) return retried;
    retried.response.resume();
    throw tokenRefused(session, session.token, retried.response.headers['www-authenticate']);
  } catch (error) {
    throw asRegistryError(error, session);
  }
}

/** The Authorization that answers `challenge`: Basic with the host's credentials, or a Bearer token. */
async function authorize(
  session: Session,
  challenge: Challenge | undefined,
  signal: AbortSignal,
): Promise<string> {
  const { repository, options, where } = session;
  const own = options.credentialsFor(repository.host);
  session.token = undefined;
  if (challenge?.scheme === 'basic') {
    if (own === undefined) throw noCredentials(session, repository.host);
    return basic(own);
  }
  if (challenge?.scheme !== 'bearer') {
    throw new RegistryAuthError(
      `${where}: the registry answered 401 without a challenge the controller can answer`,
    );
  }
  const url = tokenUrl(challenge, `repository:${repository.repository}:pull`);
  if (url === undefined)
    throw new RegistryAuthError(`${where}: the registry's token service is not an http(s) URL`);
  // The token service gets the credentials of its own host, or the registry's when it is the same host.
  const credentials = options.credentialsFor(url.host) ?? (url.host === repository.host ? own : undefined);
  const answer = await sendOutbound({
    url,
    method: 'GET',
    policy: options.policy,
    ...outboundConnection(options.connection),
    headers: credentials === undefined ? {} : { authorization: basic(credentials) },
    signal,
    maxBodyBytes: MAX_TOKEN_BYTES,
    idleTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  if (answer.status === 401 || answer.status === 403) {
    throw credentials === undefined
      ? noCredentials(session, url.host)
      : new RegistryAuthError(
          `${where}: the token service ${url.host} refused the credentials (${answer.status})`,
        );
  }
  if (answer.status !== 200) throw statusError(answer.status, `${where}: the token service ${url.host}`);
  const token = readToken(answer.body, url.host);
  session.token = { host: url.host, username: credentials?.username };
  return `Bearer ${token}`;
}

/**
 * The registry's 401 to a fresh token. The token service answers without credentials (or for a user who
 * may not read the repository) with a token that grants nothing, and the registry refuses that token
 * `insufficient_scope`: what is missing is the credentials, or the user's access, not valid ones.
 */
function tokenRefused(
  session: Session,
  token: NonNullable<Session['token']>,
  header: string | string[] | undefined,
): RegistryAuthError {
  if (token.username === undefined) return noCredentials(session, token.host);
  const error = parseChallenge(header)?.params['error'];
  const { where, repository } = session;
  if (error === 'insufficient_scope') {
    return new RegistryAuthError(
      `${where}: the token service ${token.host} granted ${token.username} no pull of ` +
        `${repository.repository} (the registry answered 401 insufficient_scope)`,
    );
  }
  return new RegistryAuthError(
    `${where}: the registry refused the token the token service ${token.host} issued ` +
      `(401${error === undefined ? '' : ` ${error}`})`,
  );
}

async function fetchManifest(
  session: Session,
  reference: string,
  signal: AbortSignal,
): Promise<FetchedManifest | undefined> {
  const { where } = session;
  const accept = OCI_MANIFEST_TYPES.join(', ');
  const answer = await ask(session, `/manifests/${reference}`, accept, signal, MAX_MANIFEST_BYTES);
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) throw statusError(answer.status, `${where}: manifest ${reference}`);
  const body = answer.body ?? Buffer.alloc(0);
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  if (reference.startsWith('sha256:') && reference !== digest) {
    throw new ArtifactInvalidError(`${where}: the manifest asked for as ${reference} has digest ${digest}`);
  }
  const manifest = readRegistryJson(body, `${where}: manifest ${reference}`);
  if (!isJsonObject(manifest))
    throw new ArtifactInvalidError(`${where}: manifest ${reference} is not a JSON object`);
  const mediaType = String(manifest['mediaType'] ?? answer.response.headers['content-type'] ?? '');
  return { digest, mediaType, manifest };
}

/** A registry's JSON answer through the parse door; what the door refuses is an invalid artifact. */
function readRegistryJson(body: Buffer, source: string): unknown {
  try {
    return readJsonValue(body.toString('utf8'), source, 'registry');
  } catch (error) {
    throw new ArtifactInvalidError(messageOf(error), { cause: error });
  }
}

function basic({ username, password }: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

function readToken(body: Buffer | undefined, host: string): string {
  let value: unknown;
  try {
    value = readJsonValue((body ?? Buffer.alloc(0)).toString('utf8'), `the token of ${host}`, 'registry');
  } catch (error) {
    throw new RegistryAuthError(`the token service ${host} answered no token: ${messageOf(error)}`);
  }
  const token = isJsonObject(value) ? (value['token'] ?? value['access_token']) : undefined;
  if (typeof token !== 'string' || token === '') {
    throw new RegistryAuthError(`the token service ${host} answered no token`);
  }
  return token;
}

function noCredentials({ where, options }: Session, host: string): RegistryAuthError {
  const missing =
    options.noCredentials?.(host) ??
    `spec.source.secretRef names none for ${host} (a kubernetes.io/dockerconfigjson Secret)`;
  return new RegistryAuthError(`${where}: ${host} asks for credentials, and ${missing}`);
}

/** What a status other than 200 means: 401/403 refused, 404 absent, 429/5xx down, else not a registry. */
function statusError(status: number, what: string): IntentError {
  if (status === 401 || status === 403)
    return new RegistryAuthError(`${what}: the registry refused the credentials (${status})`);
  if (status === 404) return new ArtifactNotFoundError(`${what} is not in the registry (404)`);
  if (status === 429 || status >= 500)
    return new RegistryUnreachableError(`${what}: the registry answered ${status}`);
  return new ArtifactInvalidError(`${what}: the registry answered ${status}`);
}

/** A failure on the way: the door's refusals and bounds as they are; the network's, unreachable. */
function asRegistryError(error: unknown, { where, repository }: Session): unknown {
  if (error instanceof IntentError || isAbortError(error)) return error;
  // A certificate's failure says which and why (docs/tls-and-proxies.md), naming `host:port` as Git's.
  const tls = tlsFailureOf(error, repository.host);
  if (tls !== undefined) return tls;
  return new RegistryUnreachableError(`${where}: no answer (${messageOf(error)})`, { cause: error });
}
