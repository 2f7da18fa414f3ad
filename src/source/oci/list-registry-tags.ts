/**
 * A repository's tags as the distribution spec lists them (`GET /v2/<name>/tags/list`), page after
 * page while the answer's `Link` header names a next one, for spec.source.ref.semver. The list is the
 * registry's to make as long as it likes, so it is bounded: the bytes of a page, the number of pages
 * and the number of tags. A next page is followed only on the registry's own origin and tag list path,
 * so the registry's credentials never go elsewhere.
 */
import { ArtifactRefusedError } from './artifact-refused-error.js';
import { OCI_TAG } from './oci-reference.js';
import { ArtifactInvalidError } from './registry-error.js';

interface TagListLimits {
  /** The bytes of one page's answer. */
  readonly maxPageBytes: number;
  readonly maxPages: number;
  /** The tags of all pages together. */
  readonly maxTags: number;
}

/**
 * 20,000 tags of 128 characters are 2.5 MiB; a repository with more (a tag for every CI build) is
 * better followed by a tag or a digest.
 */
const DEFAULT_TAG_LIST_LIMITS: TagListLimits = {
  maxPageBytes: 4 * 1024 * 1024,
  maxPages: 100,
  maxTags: 20_000,
};

/** One page as the registry answered it. */
export interface TagPage {
  /** The answer's JSON: `{"name": "…", "tags": ["…", …]}`. */
  readonly body: unknown;
  /** The answer's `Link` header, which names the next page when there is one. */
  readonly link: string | readonly string[] | undefined;
}

interface TagListRequest {
  /** `https://host/v2/repository`: the origin and path a next page must keep. */
  readonly base: string;
  /** `oci://host/repository`, for messages. */
  readonly where: string;
  /** The `n` asked of the registry for a page; the registry's own page size when unset. */
  readonly pageSize?: number;
  readonly limits?: TagListLimits;
}

/**
 * The tags, in the registry's order; strings that are not OCI tags are left out. `fetchPage` asks for
 * `path` (`/tags/list?…`, under `base`) with an answer of at most `maxBytes`.
 */
export async function listRegistryTags(
  fetchPage: (path: string, maxBytes: number) => Promise<TagPage>,
  request: TagListRequest,
): Promise<string[]> {
  const { where, limits = DEFAULT_TAG_LIST_LIMITS } = request;
  const tags: string[] = [];
  let path: string | undefined =
    request.pageSize === undefined ? '/tags/list' : `/tags/list?n=${request.pageSize}`;
  for (let pages = 0; path !== undefined; pages += 1) {
    if (pages >= limits.maxPages) {
      throw tooLong(where, `lists its tags in more than ${limits.maxPages} pages`);
    }
    const page = await fetchPage(path, limits.maxPageBytes);
    const pageTags = tagsOf(page.body, where);
    if (tags.length + pageTags.length > limits.maxTags) {
      throw tooLong(where, `lists more than ${limits.maxTags} tags`);
    }
    tags.push(...pageTags);
    path = nextPagePath(page.link, request);
  }
  return tags;
}

/** The `tags` of a page; `null` or none is an empty page (a repository whose tags were all deleted). */
function tagsOf(body: unknown, where: string): string[] {
  const tags = typeof body === 'object' && body !== null ? (body as { tags?: unknown }).tags : undefined;
  if (tags === undefined || tags === null) return [];
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) {
    throw new ArtifactInvalidError(`${where}: the registry's tag list is not {"tags": [strings]}`);
  }
  return tags.filter((tag) => OCI_TAG.test(tag));
}

/** `<…>; rel="next"` among the links of a `Link` header (RFC 8288), the target in the brackets. */
const NEXT_LINK = /<([^>]*)>\s*;[^<]*?\brel="?next"?(?=[\s;,]|$)/;

/**
 * The path under `base` of the page the `Link` header names next, undefined when it names none.
 * A link elsewhere (another host, another repository) is refused, not followed.
 */
function nextPagePath(
  link: TagPage['link'],
  { base, where }: Pick<TagListRequest, 'base' | 'where'>,
): string | undefined {
  const header = typeof link === 'string' ? link : link?.join(', ');
  const target = header === undefined ? undefined : NEXT_LINK.exec(header)?.[1];
  if (target === undefined) return undefined;
  const list = new URL(`${base}/tags/list`);
  let next: URL;
  try {
    next = new URL(target, list);
  } catch {
    throw new ArtifactInvalidError(`${where}: the registry's next page of tags is not a URL`);
  }
  if (next.origin !== list.origin || next.pathname !== list.pathname) {
    throw new ArtifactInvalidError(
      `${where}: the registry names its next page of tags at ${next.origin}${next.pathname}, not at its own tag list; it was not followed`,
    );
  }
  return `/tags/list${next.search}`;
}

function tooLong(where: string, what: string): ArtifactRefusedError {
  return new ArtifactRefusedError(
    'ArtifactTooLarge',
    where,
    `${what}, more than the controller reads for spec.source.ref.semver: follow a tag or a digest instead, or delete old tags`,
  );
}
