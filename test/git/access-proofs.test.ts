import { createHash } from 'node:crypto';
import {
  createAccessProofs,
  credentialIdentity,
  identityKey,
  MAX_ACCESS_PROOF_AGE_MS,
} from '../../src/git/access-proofs.js';

describe('credentialIdentity', () => {
  const alice = { username: 'alice', password: 'pw' };

  it('names the same credentials the same way within a process, and others otherwise', () => {
    const identity = credentialIdentity(identityKey());
    expect(identity({ ...alice })).toBe(identity(alice));
    expect(identity({ ...alice, password: 'pw2' })).not.toBe(identity(alice));
    expect(identity({ username: 'alice:pw', password: '' })).not.toBe(identity(alice));
    expect(identity(undefined)).toBe('anonymous');
  });

  it('tells SSH keys apart, and what they trust, and never takes one for a password', () => {
    const identity = credentialIdentity(identityKey());
    const deploy = { identity: 'key-a', knownHosts: 'host ssh-ed25519 AAAA' };
    expect(identity({ ...deploy })).toBe(identity(deploy));
    expect(identity({ ...deploy, identity: 'key-b' })).not.toBe(identity(deploy));
    expect(identity({ ...deploy, passphrase: 'x' })).not.toBe(identity(deploy));
    expect(identity({ ...deploy, knownHosts: 'host ssh-ed25519 BBBB' })).not.toBe(identity(deploy));
    expect(identity({ username: 'ssh', password: 'key-a' })).not.toBe(identity(deploy));
  });

  it('is keyed: another process (key) names them otherwise, and a plain digest of them says nothing', () => {
    const first = credentialIdentity(identityKey())(alice);
    expect(credentialIdentity(identityKey())(alice)).not.toBe(first);
    expect(first).not.toBe(
      createHash('sha256')
        .update(JSON.stringify(['alice', 'pw']))
        .digest('hex'),
    );
  });
});

describe('createAccessProofs', () => {
  it('holds a proof for its identity and repository, younger than the window asked for', () => {
    let clock = 0;
    const proofs = createAccessProofs(() => clock);
    proofs.record('repo', 'a');
    clock += 1_000;
    expect(proofs.provenWithin('repo', 'a', 2_000)).toBe(true);
    expect(proofs.provenWithin('repo', 'a', 1_000)).toBe(false);
    expect(proofs.provenWithin('repo', 'b', MAX_ACCESS_PROOF_AGE_MS)).toBe(false);
    expect(proofs.provenWithin('other', 'a', MAX_ACCESS_PROOF_AGE_MS)).toBe(false);
    proofs.forget('repo', 'a');
    expect(proofs.provenWithin('repo', 'a', MAX_ACCESS_PROOF_AGE_MS)).toBe(false);
  });

  it('keeps at most its bound, the least recently used dropped first', () => {
    const proofs = createAccessProofs(() => 0, 2);
    proofs.record('repo', 'a');
    proofs.record('repo', 'b');
    proofs.record('repo', 'c');
    expect(proofs.provenWithin('repo', 'a', 1)).toBe(false);
    expect(proofs.provenWithin('repo', 'c', 1)).toBe(true);
  });
});
