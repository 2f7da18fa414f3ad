import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';

// An oci:// spec.source.url makes the source an OCI artifact: its ref is a tag, a semver range of tags
// or a digest, and only it takes insecure, verify and semver. What the CRD cannot say is named field by field, as for a Git source.

const digest = `sha256:${'ab'.repeat(32)}`;
const resolve = (source: object) => resolveApplySetSpec({ source, prune: true });

describe('an oci:// source', () => {
  it('is read with its tag, insecure and the Secret of its cosign keys', () => {
    const result = resolve({
      url: 'oci://registry.example:5000/team/app',
      ref: { tag: 'v1.2.3' },
      path: 'deploy',
      insecure: true,
      verify: { provider: 'cosign', secretRef: { name: 'cosign-keys' } },
      secretRef: { name: 'pull' },
    });
    expect(result.ok && result.spec.source).toMatchObject({
      kind: 'oci',
      url: 'oci://registry.example:5000/team/app',
      ref: { type: 'tag', name: 'v1.2.3' },
      path: 'deploy',
      secretName: 'pull',
      oci: { insecure: true, verifySecretName: 'cosign-keys' },
    });
  });

  it('pins a digest, and is not verified unless asked', () => {
    const result = resolve({ url: 'oci://ghcr.io/team/app', ref: { digest } });
    expect(result.ok && result.spec.source).toMatchObject({
      kind: 'oci',
      ref: { type: 'digest', digest },
      oci: { insecure: false, verifySecretName: undefined },
    });
  });

  it('follows a semver range, kept as written', () => {
    const result = resolve({ url: 'oci://ghcr.io/team/app', ref: { semver: '>=1.0.0 <2.0.0' } });
    expect(result.ok && result.spec.source).toMatchObject({
      kind: 'oci',
      ref: { type: 'semver', range: '>=1.0.0 <2.0.0' },
    });
  });

  it.each([
    [
      { url: 'oci://ghcr.io/team/app', ref: { branch: 'main' } },
      'spec.source.ref',
      'exactly one of tag, semver or digest',
    ],
    [
      { url: 'oci://ghcr.io/team/app', ref: { tag: 'v1', semver: '^1' } },
      'spec.source.ref',
      'exactly one of tag, semver or digest',
    ],
    [
      { url: 'oci://ghcr.io/team/app', ref: { semver: '^1', digest } },
      'spec.source.ref',
      'exactly one of tag, semver or digest',
    ],
    [
      { url: 'oci://ghcr.io/team/app', ref: { semver: 'latest' } },
      'spec.source.ref.semver',
      'is not a semver range',
    ],
    [
      { url: 'oci://ghcr.io/team/app', ref: { semver: '>=1.0.0, <2.0.0' } },
      'spec.source.ref.semver',
      'not a comma',
    ],
    [{ url: 'oci://ghcr.io/team/app', ref: { semver: '' } }, 'spec.source.ref.semver', 'must not be empty'],
    [{ url: 'oci://ghcr.io/team/app', ref: { semver: 1 } }, 'spec.source.ref.semver', 'must be a string'],
    [
      { url: 'oci://ghcr.io/team/app', ref: { digest: 'sha256:abc' } },
      'spec.source.ref.digest',
      'must be sha256:',
    ],
    [{ url: 'oci://ghcr.io/team/app', ref: { tag: 'a/b' } }, 'spec.source.ref.tag', 'must be an OCI tag'],
    [{ url: 'oci://ghcr.io/Team/app', ref: { tag: 'v1' } }, 'spec.source.url', 'is not a repository name'],
    [
      { url: 'oci://ghcr.io/team/app', ref: { tag: 'v1' }, verify: { provider: 'cosign' } },
      'spec.source.verify.secretRef',
      'keyless verification (Fulcio, Rekor) needs the public internet and is not supported',
    ],
    [
      {
        url: 'oci://ghcr.io/team/app',
        ref: { tag: 'v1' },
        verify: { provider: 'notation', secretRef: { name: 'k' } },
      },
      'spec.source.verify.provider',
      'must be cosign',
    ],
    [
      { url: 'https://git.example/r.git', ref: { branch: 'main' }, insecure: true },
      'spec.source.insecure',
      'oci:// source only',
    ],
    [
      { url: 'https://git.example/r.git', ref: { digest } },
      'spec.source.ref',
      'exactly one of branch, tag or commit',
    ],
    [
      { url: 'https://git.example/r.git', ref: { semver: '^1' } },
      'spec.source.ref.semver',
      'applies to an oci:// source only',
    ],
    [
      { url: 'https://git.example/r.git', ref: { tag: 'v1.0.0', semver: '^1' } },
      'spec.source.ref.semver',
      'applies to an oci:// source only',
    ],
  ])('refuses %j, naming %s', (source, field, message) => {
    const result = resolve(source);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors).toEqual(
      expect.arrayContaining([{ field, message: expect.stringContaining(message) }]),
    );
  });
});
