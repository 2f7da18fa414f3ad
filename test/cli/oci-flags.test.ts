import { ociInputOf } from '../../src/cli/oci-flags.js';
import { parseCommandLine } from '../../src/cli/parse-command-line.js';
import { applyFlagSpecs } from '../../src/cli/apply-set-flags.js';
import { cliOciPolicy } from '../../src/net/destination-policy.js';
import { destinationUrlRefusal } from '../../src/net/destination-url-refusal.js';
import { parseSourceHostList } from '../../src/net/host-list.js';

// `apply --oci`: the flags as an ApplySet's spec.source reads them, and the address policy of a
// registry the user named on their own machine.

const read = (...argv: string[]) => ociInputOf(parseCommandLine(argv, applyFlagSpecs));
const digest = `sha256:${'a'.repeat(64)}`;

describe('--oci and its flags', () => {
  it('reads a tag or a digest, a normalized path, keys and limits', () => {
    expect(
      read('--oci', 'oci://localhost:5000/team/app', '--tag', 'v1.2', '--path', './deploy/'),
    ).toMatchObject({
      host: 'localhost:5000',
      ref: { type: 'tag', name: 'v1.2' },
      path: 'deploy',
      insecure: false,
      verifyKeys: [],
    });
    const pinned = read(
      '--oci',
      'oci://r.example/a',
      '--digest',
      digest,
      '--insecure',
      '--verify-key',
      'a.pub',
      '--verify-key',
      'b.pub',
      '--oci-max-files',
      '20',
    );
    expect(pinned).toMatchObject({
      ref: { type: 'digest', digest },
      insecure: true,
      verifyKeys: ['a.pub', 'b.pub'],
    });
    expect(pinned?.limits.maxFiles).toBe(20);
    expect(read('-f', 'x.yaml')).toBeUndefined();
  });

  it.each([
    [['--oci', 'oci://r.example/a'], 'exactly one of --tag TAG or --digest'],
    [
      ['--oci', 'oci://r.example/a', '--tag', 'v1', '--digest', digest],
      'exactly one of --tag TAG or --digest',
    ],
    [['--oci', 'https://r.example/a', '--tag', 'v1'], '--oci must start with oci://'],
    [['--oci', 'oci://r.example/A', '--tag', 'v1'], 'is not a repository name'],
    [['--oci', 'oci://r.example/a', '--tag', '-v1'], '--tag must be an OCI tag'],
    [['--oci', 'oci://r.example/a', '--digest', 'sha256:abc'], '--digest must be sha256:'],
    [['--oci', 'oci://r.example/a', '--tag', 'v1', '--path', '../up'], '--path must be relative'],
    [
      ['--oci', 'oci://r.example/a', '--tag', 'v1', '--oci-max-layer-bytes', '1x'],
      '--oci-max-layer-bytes must be',
    ],
    [['--verify-key', 'a.pub'], '--verify-key is for --oci'],
  ])('refuses %j', (argv, message) => {
    expect(() => read(...argv)).toThrow(message);
  });
});

describe('the address policy of apply --oci', () => {
  const policy = cliOciPolicy(parseSourceHostList('localhost'));
  const refusal = (url: string) => destinationUrlRefusal(url, policy.allowedHosts, policy.reading);

  it('reaches the registry the user named on loopback, on any port, and public hosts it redirects to', () => {
    expect(refusal('http://localhost:5000/v2/team/app/manifests/v1')).toBeUndefined();
    expect(refusal('http://localhost:5001/token')).toBeUndefined();
    expect(refusal('https://blobs.example.com/sha256/abc')).toBeUndefined();
  });

  it('refuses loopback elsewhere, link-local and metadata addresses', () => {
    expect(refusal('http://127.0.0.1:8080/x')).toContain('a loopback address');
    expect(refusal('http://169.254.169.254/latest/meta-data')).toContain('link-local');
    expect(refusal('http://metadata.google.internal/x')).toContain('cloud metadata host name');
    expect(
      destinationUrlRefusal(
        'http://169.254.169.254/v2/',
        parseSourceHostList('169.254.169.254'),
        cliOciPolicy(parseSourceHostList('169.254.169.254')).reading,
      ),
    ).toContain('link-local');
  });
});
