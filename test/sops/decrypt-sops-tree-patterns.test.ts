import { randomBytes } from 'node:crypto';
import { decryptSopsTree } from '../../src/sops/decrypt-sops-tree.js';
import type { SopsMetadata } from '../../src/sops/sops-metadata.js';
import { parseSopsDocuments } from '../../src/sops/sops-tree.js';

// Issue #33, finding 2: a sops file's encrypted_regex is the tenant's, and it is matched against every
// key before the MAC is checked. `^(a+)+$` against a key of many `a`s and a `-` backtracks for 2^n
// steps in JavaScript's RegExp (the event loop, /healthz with it, froze); RE2 answers at once.

const metadata = (encryptedRegex: string): SopsMetadata => ({
  ageKeys: [],
  otherKeyKinds: [],
  lastModified: '2026-11-29T00:00:00Z',
  // A MAC the file's key did not write: the file is refused at the MAC, once every key was matched.
  mac: `ENC[AES256_GCM,data:${randomBytes(32).toString('base64')},iv:${randomBytes(32).toString('base64')},tag:${randomBytes(16).toString('base64')},type:str]`,
  macOnlyEncrypted: false,
  rules: {
    unencryptedSuffix: '',
    encryptedSuffix: '',
    unencryptedRegex: '',
    encryptedRegex,
    byComments: false,
  },
});

describe('the regular expressions of a sops file', () => {
  it('match in linear time: ^(a+)+$ against a key of 30 a and a dash is refused at the MAC at once', () => {
    const key = `${'a'.repeat(30)}-`;
    const documents = parseSopsDocuments(`${key}: plain\nother: value\n`, 'secret.yaml');
    const started = Date.now();
    expect(() => decryptSopsTree('secret.yaml', documents, metadata('^(a+)+$'), randomBytes(32))).toThrow(
      /^cannot decrypt sops file secret\.yaml: its MAC does not verify/,
    );
    // A backtracking engine takes seconds for 30 (and doubles with each more `a`); RE2, microseconds.
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('refuses a pattern RE2 does not read, naming the field, before anything is decrypted', () => {
    const documents = parseSopsDocuments('data: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\n', 'secret.yaml');
    expect(() => decryptSopsTree('secret.yaml', documents, metadata('^(?=data)'), randomBytes(32))).toThrow(
      /^cannot decrypt sops file secret\.yaml: sops\.encrypted_regex is not a regular expression RE2 reads: .*Perl syntax.*; nothing was applied$/,
    );
  });
});
