import type { ResolvedApplySetSpec } from '../../src/api/applyset-types.js';
import { pinRevision } from '../../src/source/pin-revision.js';

const sha = '0123456789abcdef0123456789abcdef01234567';
const digest = `sha256:${'a'.repeat(64)}`;

const specOf = (kind: 'git' | 'oci' | 'helm'): ResolvedApplySetSpec =>
  ({
    source: { kind, url: 'https://example.test/repo', ref: { type: 'branch', name: 'main' } },
  }) as unknown as ResolvedApplySetSpec;

describe('a spec pinned to the revision its status recorded', () => {
  it.each([
    ['git', `main@sha1:${sha}`, { type: 'commit', sha }],
    ['git', `sha1:${sha}`, { type: 'commit', sha }],
    ['oci', `v1.2.0@${digest}`, { type: 'digest', digest }],
    ['oci', digest, { type: 'digest', digest }],
    ['helm', `web@1.2.0-rc.1@${digest}`, { type: 'semver', range: '1.2.0-rc.1' }],
  ] as const)('reads a %s revision %s back as its exact ref', (kind, revision, ref) => {
    const pinned = pinRevision(specOf(kind), revision);
    expect('spec' in pinned ? pinned.spec.source.ref : pinned).toEqual(ref);
  });

  it.each([
    ['git', `v1@${digest}`],
    ['oci', `main@sha1:${sha}`],
    ['helm', 'web@1.2.0'],
  ] as const)('names a %s revision it cannot read back (%s)', (kind, revision) => {
    expect(pinRevision(specOf(kind), revision)).toEqual({
      problem: `revision ${revision} is not one a ${kind} source (https://example.test/repo) records`,
    });
  });
});
