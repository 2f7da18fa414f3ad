import { createHmac, timingSafeEqual } from 'node:crypto';
import { InputParseError } from '../input/input-bounds.js';
import { readJsonValue } from '../input/read-json-value.js';

/** Which forge sent a push, from its headers. */
export type PushProvider = 'github' | 'gitlab' | 'gitea';

/** What a push says: the repository, under every URL the payload names it by, and the ref pushed. */
export interface PushEvent {
  readonly provider: PushProvider;
  readonly repositoryUrls: readonly string[];
  /** `main` for `refs/heads/main`; undefined for a tag push. */
  readonly branch?: string;
  /** `v1.2.0` for `refs/tags/v1.2.0`. */
  readonly tag?: string;
}

/** A request's headers as Node gives them, names in lower case. */
export type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

export function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : (value as string | undefined);
}

/** GitHub, GitLab, or Gitea and Forgejo (which also send GitHub's event header): told by their headers. */
export function pushProviderOf(headers: Headers): PushProvider | undefined {
  if (header(headers, 'x-gitea-event') !== undefined || header(headers, 'x-forgejo-event') !== undefined) {
    return 'gitea';
  }
  if (header(headers, 'x-gitlab-event') !== undefined) return 'gitlab';
  if (header(headers, 'x-github-event') !== undefined) return 'github';
  return undefined;
}

/** A push, or undefined for another event (a ping, an issue): those are acknowledged and ignored. */
export function isPushEvent(provider: PushProvider, headers: Headers): boolean {
  switch (provider) {
    case 'github':
      return header(headers, 'x-github-event') === 'push';
    case 'gitea':
      return (header(headers, 'x-gitea-event') ?? header(headers, 'x-forgejo-event')) === 'push';
    case 'gitlab':
      return ['Push Hook', 'Tag Push Hook'].includes(header(headers, 'x-gitlab-event') ?? '');
  }
}

/**
 * Checks that the body came from someone who holds the receiver's secret: GitHub, Gitea and Forgejo
 * sign the raw body with HMAC-SHA256 (`X-Hub-Signature-256: sha256=<hex>`, `X-Gitea-Signature:
 * <hex>`); GitLab sends the secret itself as `X-Gitlab-Token`. Constant-time comparisons throughout.
 */
export function verifyPushSignature(
  provider: PushProvider,
  headers: Headers,
  body: Buffer,
  secret: string,
): boolean {
  if (provider === 'gitlab') return equalText(header(headers, 'x-gitlab-token') ?? '', secret);
  const expected = createHmac('sha256', secret).update(body).digest('hex');
  const given =
    provider === 'github'
      ? (header(headers, 'x-hub-signature-256') ?? '').replace(/^sha256=/, '')
      : (header(headers, 'x-gitea-signature') ?? header(headers, 'x-forgejo-signature') ?? '');
  return equalText(given.toLowerCase(), expected);
}

/** Equal and not empty, compared in constant time (for a given length). */
export function equalText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** The repository URLs and the ref of a push payload, or a reason it is not one. */
export function parsePushPayload(
  provider: PushProvider,
  body: Buffer,
): PushEvent | { readonly error: string } {
  let payload: unknown;
  try {
    payload = readJsonValue(body.toString('utf8'), 'the body', 'push-event');
  } catch (error) {
    // `the body is not JSON`, `the body is 2 MiB, over the limit of 1 MiB`: the source starts the line.
    if (error instanceof InputParseError) return { error: `the body ${error.detail}` };
    throw error;
  }
  if (typeof payload !== 'object' || payload === null) return { error: 'the body is not a JSON object' };
  const { ref, repository, project } = payload as Record<string, unknown>;
  if (typeof ref !== 'string') return { error: 'the payload has no ref' };
  // GitHub and Gitea describe the repository under `repository`, GitLab under `project` (and an older
  // `repository` with fewer fields); every URL field either may carry is collected.
  const urls: string[] = [];
  for (const source of [repository, project]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const field of ['clone_url', 'html_url', 'git_http_url', 'http_url', 'web_url', 'url', 'homepage']) {
      const value = (source as Record<string, unknown>)[field];
      if (typeof value === 'string' && /^https?:\/\//.test(value)) urls.push(value);
    }
  }
  if (urls.length === 0) return { error: 'the payload names no http(s) repository URL' };
  const branch = /^refs\/heads\/(.+)$/.exec(ref)?.[1];
  const tag = /^refs\/tags\/(.+)$/.exec(ref)?.[1];
  return {
    provider,
    repositoryUrls: [...new Set(urls)],
    ...(branch === undefined ? {} : { branch }),
    ...(tag === undefined ? {} : { tag }),
  };
}

/**
 * The form two URLs of one repository share: host in lower case with its default port dropped, path
 * without a trailing `/` or `.git`; scheme, credentials, query and fragment ignored. So
 * `https://git.example.com/team/app.git` (the clone URL) and `https://git.example.com/team/app` (the
 * web URL a payload may give) match the URL an ApplySet names, also over SSH on its default port
 * (`ssh://git@git.example.com/team/app.git`, `git@git.example.com:team/app.git`).
 */
export function repositoryIdentity(url: string): string | undefined {
  // An ApplySet's ssh source in git's scp-like form (`git@host:team/app.git`) is its ssh:// URL.
  const scp = url.includes('://') ? null : /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):\/*(.+)$/.exec(url);
  let parsed: URL;
  try {
    parsed = new URL(scp === null ? url : `ssh://${scp[1]}/${scp[2]}`);
  } catch {
    return undefined;
  }
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  return `${parsed.host.toLowerCase()}${path}`;
}
