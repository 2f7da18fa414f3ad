import { UsageError } from '../../src/cli/parse-command-line.js';
import { gitLimitConfig, parseSizeFlag } from '../../src/cli/git-limit-flags.js';

describe('the Git bound flags', () => {
  it('read sizes with Ki, Mi and Gi, and counts without a unit', () => {
    expect(parseSizeFlag('git-max-object-bytes', '16Mi')).toBe(16 * 1024 * 1024);
    expect(parseSizeFlag('git-cache-max-bytes', '1Gi')).toBe(1024 ** 3);
    expect(parseSizeFlag('git-max-fetch-bytes', '512Ki')).toBe(512 * 1024);
    expect(parseSizeFlag('git-max-fetch-objects', '50000')).toBe(50_000);
  });

  it.each(['0', '-1', '1.5Mi', '16MB', '', 'Mi', '99999999999999999Gi'])(
    'refuse %j naming the flag',
    (text) => {
      expect(() => parseSizeFlag('git-max-object-bytes', text)).toThrow(
        `--git-max-object-bytes must be a positive number (with Ki, Mi or Gi for sizes), got "${text}"`,
      );
      // A usage error, which the command shows with its usage; not a TypeError, which is a bug.
      expect(() => parseSizeFlag('git-max-object-bytes', text)).toThrow(UsageError);
    },
  );

  it('leave the defaults where no flag is given', () => {
    expect(gitLimitConfig({ 'git-max-fetch-objects': '10' })).toEqual({
      gitFetchLimits: { maxObjectBytes: 16 * 1024 ** 2, maxFetchBytes: 48 * 1024 ** 2, maxFetchObjects: 10 },
      gitCacheMaxBytes: 768 * 1024 ** 2,
      gitCacheMaxRepositoryBytes: 256 * 1024 ** 2,
      ociArtifactLimits: {
        maxLayerBytes: 50 * 1024 ** 2,
        maxExpandedBytes: 200 * 1024 ** 2,
        maxFiles: 10_000,
        maxFileBytes: 10 * 1024 ** 2,
      },
      ociCacheMaxBytes: 256 * 1024 ** 2,
    });
  });

  it('set what one OCI artifact may cost', () => {
    const { ociArtifactLimits } = gitLimitConfig({ 'oci-max-expanded-bytes': '1Mi', 'oci-max-files': '20' });
    expect(ociArtifactLimits).toMatchObject({ maxExpandedBytes: 1024 ** 2, maxFiles: 20 });
    expect(() => gitLimitConfig({ 'oci-max-layer-bytes': '0' })).toThrow(
      '--oci-max-layer-bytes must be a positive number',
    );
  });
});
