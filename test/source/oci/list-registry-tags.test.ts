import { listRegistryTags, type TagPage } from '../../../src/source/oci/list-registry-tags.js';

// The tag list's pages as a registry answers them, read without a network: the Link header followed
// on the registry's own tag list only, and the list bounded however the registry answers.
// registry-client.itest.ts reads the real registry's pages.

const base = 'https://registry.example/v2/team/app';
const where = 'oci://registry.example/team/app';

/** A registry of fixed pages: path → answer; the paths asked are recorded. */
function pages(answers: Record<string, TagPage>) {
  const asked: string[] = [];
  const fetchPage = async (path: string) => {
    asked.push(path);
    const answer = answers[path];
    if (answer === undefined) throw new Error(`no page at ${path}`);
    return answer;
  };
  return { asked, fetchPage };
}

const page = (tags: unknown, link?: string | string[]): TagPage => ({
  body: { name: 'team/app', tags },
  link,
});

describe('listing a repository’s tags', () => {
  it('follows the Link header page by page, relative or absolute, asking for the page size given', async () => {
    const registry = pages({
      '/tags/list?n=2': page(['1.0.0', '1.2.0'], '</v2/team/app/tags/list?last=1.2.0&n=2>; rel="next"'),
      '/tags/list?last=1.2.0&n=2': page(
        ['2.0.0', 'latest'],
        `<${base}/tags/list?last=latest&n=2>; rel="next"`,
      ),
      '/tags/list?last=latest&n=2': page([]),
    });
    expect(await listRegistryTags(registry.fetchPage, { base, where, pageSize: 2 })).toEqual([
      '1.0.0',
      '1.2.0',
      '2.0.0',
      'latest',
    ]);
    expect(registry.asked).toEqual([
      '/tags/list?n=2',
      '/tags/list?last=1.2.0&n=2',
      '/tags/list?last=latest&n=2',
    ]);
  });

  it('finds the next link among others, and stops when there is none', async () => {
    const registry = pages({
      '/tags/list': page(
        ['a'],
        ['</v2/team/app/tags/list?last=0>; rel="prev", </v2/team/app/tags/list?last=a>; rel=next'],
      ),
      '/tags/list?last=a': page(['b'], '</v2/team/app/tags/list?last=0>; rel="prev"'),
    });
    expect(await listRegistryTags(registry.fetchPage, { base, where })).toEqual(['a', 'b']);
  });

  it('reads a repository without tags, and leaves out what is not a tag', async () => {
    const registry = pages({ '/tags/list': page(null, undefined) });
    expect(await listRegistryTags(registry.fetchPage, { base, where })).toEqual([]);
    const odd = pages({ '/tags/list': page(['v1.0.0', '../../x', '', 'a'.repeat(129)]) });
    expect(await listRegistryTags(odd.fetchPage, { base, where })).toEqual(['v1.0.0']);
  });

  it.each([
    ['another host', 'https://elsewhere.example/v2/team/app/tags/list?last=a'],
    ['another scheme', 'http://registry.example/v2/team/app/tags/list?last=a'],
    ['another repository', '/v2/team/other/tags/list?last=a'],
    ['another path', '/v2/team/app/manifests/latest'],
  ])('refuses a next page on %s, without asking for it', async (_name, target) => {
    const registry = pages({ '/tags/list': page(['a'], `<${target}>; rel="next"`) });
    await expect(listRegistryTags(registry.fetchPage, { base, where })).rejects.toMatchObject({
      reason: 'ArtifactInvalid',
      message: expect.stringContaining('it was not followed'),
    });
    expect(registry.asked).toEqual(['/tags/list']);
  });

  it('refuses an answer that is not a list of tags', async () => {
    const registry = pages({ '/tags/list': page([1, 2]) });
    await expect(listRegistryTags(registry.fetchPage, { base, where })).rejects.toMatchObject({
      reason: 'ArtifactInvalid',
      message: `${where}: the registry's tag list is not {"tags": [strings]}`,
    });
  });

  const limits = { maxPageBytes: 1024, maxPages: 3, maxTags: 5 };

  it('stops at the page bound: a registry that always names a next page', async () => {
    let asked = 0;
    const endless = async () => {
      asked += 1;
      return page([`t${asked}`], `</v2/team/app/tags/list?last=t${asked}>; rel="next"`);
    };
    await expect(listRegistryTags(endless, { base, where, limits })).rejects.toMatchObject({
      reason: 'ArtifactTooLarge',
      intent: 'stalled',
      message: `artifact ${where} lists its tags in more than 3 pages, more than the controller reads for spec.source.ref.semver: follow a tag or a digest instead, or delete old tags; nothing was applied`,
    });
    expect(asked).toBe(3);
  });

  it('stops at the tag bound, and asks each page for no more than the page bound', async () => {
    const sizes: number[] = [];
    const registry = async (_path: string, maxBytes: number) => {
      sizes.push(maxBytes);
      return page(['1', '2', '3'], '</v2/team/app/tags/list?last=3>; rel="next"');
    };
    await expect(listRegistryTags(registry, { base, where, limits })).rejects.toMatchObject({
      reason: 'ArtifactTooLarge',
      message: expect.stringContaining('lists more than 5 tags'),
    });
    expect(sizes).toEqual([1024, 1024]);
  });
});
