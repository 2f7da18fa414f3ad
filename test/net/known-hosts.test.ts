import { createHmac, randomBytes } from 'node:crypto';
import {
  checkHostKey,
  hostKeyAlgorithms,
  keyFingerprint,
  parseKnownHosts,
} from '../../src/net/known-hosts.js';

/** A key blob as the SSH wire format has it: the type, length-prefixed, then the key's bytes. */
function blob(type: string, body: Buffer = randomBytes(32)): Buffer {
  const name = Buffer.from(type, 'latin1');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(name.length);
  return Buffer.concat([length, name, body]);
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

describe('known_hosts', () => {
  const ed25519 = blob('ssh-ed25519');
  const ecdsa = blob('ecdsa-sha2-nistp256', randomBytes(80));
  const rsa = blob('ssh-rsa', randomBytes(270));
  const line = (patterns: string, key: Buffer) =>
    `${patterns} ${key.subarray(4, 4 + key.readUInt32BE(0)).toString()} ${key.toString('base64')}`;

  it.each<[string, string, string, number, Buffer]>([
    ['a plain host on port 22', line('git.example.com', ed25519), 'git.example.com', 22, ed25519],
    [
      'one of several names, any case',
      line('other.example,GIT.example.com,10.0.0.1', ecdsa),
      'git.example.com',
      22,
      ecdsa,
    ],
    ['[host]:port on another port', line('[git.example.com]:2222', rsa), 'git.example.com', 2222, rsa],
    ['a hashed host', line(hashed('git.example.com'), ed25519), 'git.example.com', 22, ed25519],
    ['a hashed [host]:port', line(hashed('[127.0.0.1]:4022'), ed25519), '127.0.0.1', 4022, ed25519],
  ])('accepts the listed key of %s', (_, text, host, port, key) => {
    expect(checkHostKey(parseKnownHosts(`# comment\n\n${text} a comment\n`), host, port, key)).toEqual({
      accepted: true,
    });
  });

  it.each<[string, string, string, number]>([
    ['another key for the host', line('git.example.com', ecdsa), 'git.example.com', 22],
    ['the key for another host', line('evil.example.com', ed25519), 'git.example.com', 22],
    ['a plain host entry on another port', line('git.example.com', ed25519), 'git.example.com', 2222],
    ['a [host]:port entry of another port', line('[git.example.com]:2222', ed25519), 'git.example.com', 2223],
    ['a hashed entry of another host', line(hashed('evil.example.com'), ed25519), 'git.example.com', 22],
    ['a wildcard, which is not read', line('*.example.com', ed25519), 'git.example.com', 22],
    [
      'a revoked key, listed too',
      `${line('git.example.com', ed25519)}\n@revoked ${line('git.example.com', ed25519)}`,
      'git.example.com',
      22,
    ],
    [
      "a line whose type is not its blob's",
      `git.example.com ssh-rsa ${ed25519.toString('base64')}`,
      'git.example.com',
      22,
    ],
    ['nothing at all', '', 'git.example.com', 22],
  ])('refuses %s, naming the fingerprint seen', (_, text, host, port) => {
    expect(checkHostKey(parseKnownHosts(text), host, port, ed25519)).toEqual({
      accepted: false,
      fingerprint: keyFingerprint(ed25519),
      keyType: 'ssh-ed25519',
    });
  });

  it('prints fingerprints as ssh-keygen -l does', () => {
    // ssh-keygen -l of this key prints SHA256:… with the unpadded base64 of its blob's SHA-256.
    const key = Buffer.from('AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl', 'base64');
    expect(keyFingerprint(key)).toBe('SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU');
  });

  it("offers the server the algorithms of the key types listed for it, in order, RSA's SHA-2 ones first", () => {
    const knownHosts = parseKnownHosts(
      [
        line('other.example', ed25519),
        line('[git.example.com]:2222', ecdsa),
        line('[git.example.com]:2222', rsa),
      ].join('\n'),
    );
    expect(hostKeyAlgorithms(knownHosts, 'git.example.com', 2222)).toEqual([
      'ecdsa-sha2-nistp256',
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
    ]);
    expect(hostKeyAlgorithms(knownHosts, 'git.example.com', 22)).toBeUndefined();
  });
});
