import { InputParseError } from '../input/input-bounds.js';
import { readJsonValue } from '../input/read-json-value.js';
import { equalText, header, type Headers } from './push-event.js';

/*
 * An OCI registry's push notifications, as distribution (the CNCF `registry`, also what GitLab's,
 * GitHub's old and many private registries run) sends them: a POST of `{"events": [...]}`, one event
 * per blob or manifest pushed, pulled or deleted, with the static headers its config names (no
 * signature). Pure: the envelope is read, the webhook server and the controller act on it.
 */

/** distribution v2 sends `events.v1+json`, v3 `events.v2+json`; the fields read here are the same. */
const ENVELOPE_MEDIA_TYPES = new Set([
  'application/vnd.docker.distribution.events.v1+json',
  'application/vnd.docker.distribution.events.v2+json',
]);

/** What a tag can name: an image or OCI manifest, or an index of them. A blob is never tagged. */
const MANIFEST_MEDIA_TYPES = new Set([
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v1+prettyjws',
]);

/** A manifest pushed to a registry: where, and under which tag (none for a push by digest). */
export interface RegistryPush {
  /**
   * The registry's host as the event names it, each in the form of registryHostKey: the host of
   * `target.url` (distribution's `http.host` when configured, else the pushing request's
   * `X-Forwarded-Host` or `Host`) and `request.host` (the pushing request's `Host` as it reached the
   * registry). Either may be the name an ApplySet uses; behind a proxy they can differ.
   */
  readonly hosts: readonly string[];
  /** `team/app`. */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

/** Whether the request says it is a notification envelope (its Content-Type, parameters aside). */
export function isRegistryEnvelope(headers: Headers): boolean {
  const type = (header(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return ENVELOPE_MEDIA_TYPES.has(type);
}

/**
 * Whether the request carries the receiver's secret as `Authorization: Bearer <secret>`, the header an
 * endpoint of distribution's `notifications.endpoints` sends. Compared in constant time.
 */
export function verifyRegistryToken(headers: Headers, secret: string): boolean {
  const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header(headers, 'authorization') ?? '')?.[1];
  return equalText(given ?? '', secret);
}

/**
 * `registry.example.com`, `registry.example.com:5000`: a registry host lower-cased, with the default
 * ports of HTTPS and HTTP dropped (a registry named with and without `:443` is one registry); undefined
 * for what is not a host[:port].
 */
export function registryHostKey(host: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(`https://${host}/`);
  } catch {
    return undefined;
  }
  if (parsed.host === '' || parsed.username !== '' || parsed.pathname !== '/' || host.includes('@')) {
    return undefined;
  }
  return parsed.host.replace(/:(?:80|443)$/, '');
}

/**
 * The manifest pushes of an envelope, or why it is not one. Every other event is left out: blob
 * pushes (one per layer, before the manifest that names them), pulls (the controller's own among
 * them), deletes, and events without a repository or a host.
 */
export function parseRegistryEnvelope(body: Buffer): readonly RegistryPush[] | { readonly error: string } {
  let envelope: unknown;
  try {
    envelope = readJsonValue(body.toString('utf8'), 'the body', 'push-event');
  } catch (error) {
    if (error instanceof InputParseError) return { error: `the body ${error.detail}` };
    throw error;
  }
  const events = isRecord(envelope) ? envelope['events'] : undefined;
  if (!Array.isArray(events)) return { error: 'the body is not an envelope of events ({"events": [...]})' };
  const pushes = new Map<string, RegistryPush>();
  for (const event of events) {
    const push = manifestPush(event);
    if (push !== undefined) pushes.set(JSON.stringify(push), push);
  }
  return [...pushes.values()];
}

function manifestPush(event: unknown): RegistryPush | undefined {
  if (!isRecord(event) || event['action'] !== 'push') return undefined;
  const { target, request } = event;
  if (!isRecord(target)) return undefined;
  const { mediaType, repository, tag, digest, url } = target;
  if (typeof repository !== 'string' || repository === '') return undefined;
  const tagged = typeof tag === 'string' && tag !== '';
  if (!tagged && !(typeof mediaType === 'string' && MANIFEST_MEDIA_TYPES.has(mediaType))) return undefined;
  const hosts = [urlHost(url), isRecord(request) ? hostOf(request['host']) : undefined].filter(
    (host): host is string => host !== undefined,
  );
  if (hosts.length === 0) return undefined;
  return {
    hosts: [...new Set(hosts)],
    repository,
    ...(tagged ? { tag } : {}),
    ...(typeof digest === 'string' && digest !== '' ? { digest } : {}),
  };
}

/** The host of an absolute http(s) `target.url`; undefined for a relative one (`http.relativeurls`). */
function urlHost(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? hostOf(parsed.host) : undefined;
}

function hostOf(host: unknown): string | undefined {
  return typeof host === 'string' && host !== '' ? registryHostKey(host) : undefined;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
