import { forbiddenAddressReason, isMetadataHostName } from '../../src/net/forbidden-address.js';

describe('forbiddenAddressReason', () => {
  it.each([
    '169.254.169.254',
    '169.254.0.1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    'fd00:ec2::254',
    'FD00:EC2:0:0:0:0:0:254',
  ])('refuses %s', (address) => {
    expect(forbiddenAddressReason(address)).toEqual(expect.any(String));
  });

  it.each([
    '127.0.0.1',
    '::1',
    '10.0.0.1',
    '192.168.1.1',
    '8.8.8.8',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    'fec0::1',
  ])('allows %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeUndefined();
  });

  it('refuses what is not an address', () => {
    expect(forbiddenAddressReason('example.com')).toBe('not an IP address');
  });
});

describe('isMetadataHostName', () => {
  it.each(['metadata', 'METADATA.google.internal', 'metadata.google.internal.', 'instance-data'])(
    '%s',
    (host) => {
      expect(isMetadataHostName(host)).toBe(true);
    },
  );
  it('leaves other hosts alone', () => {
    expect(isMetadataHostName('git.example.com')).toBe(false);
  });
});
