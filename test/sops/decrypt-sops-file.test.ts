import { parseAllDocuments } from 'yaml';
import { decryptSopsFile } from '../../src/sops/decrypt-sops-file.js';
import { SopsDecryptionError } from '../../src/sops/sops-decryption-error.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type AgeKey, type SopsTool } from '../harness/sops-tool.js';

// Files encrypted by the real sops (scripts/build-sops.sh) and decrypted by ours, compared with what
// `sops decrypt` makes of the same file; then the files an attacker or a mistake would hand us.

const SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: db
  labels:
    tier: backend
type: Opaque
stringData:
  password: PlainMarker4r9
  "10": ten
  "2": two
data:
  token: ${Buffer.from('TokenMarker8u1').toString('base64')}
`;
const MARKERS = ['PlainMarker4r9', 'TokenMarker8u1'];

const onlyData = ['--encrypted-regex', '^(data|stringData)$'];

let sops: SopsTool;
let key: AgeKey;
let other: AgeKey;

beforeAll(async () => {
  sops = await startSopsTool();
  [key, other] = await Promise.all([sops.ageKey(), sops.ageKey()]);
}, SOPS_TIMEOUT_MS);
afterAll(() => sops.cleanup());

const text = (bytes: Uint8Array | undefined): string =>
  Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const documents = (yamlText: string): unknown[] =>
  parseAllDocuments(yamlText, { schema: 'core' }).map((document) => document.toJS() as unknown);

async function ours(name: string, encrypted: string, identities = [key.identity]): Promise<string> {
  return text(await decryptSopsFile(name, Buffer.from(encrypted), identities));
}

async function refusal(
  name: string,
  encrypted: string,
  identities = [key.identity],
): Promise<SopsDecryptionError> {
  const error = await decryptSopsFile(name, Buffer.from(encrypted), identities).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SopsDecryptionError);
  const refused = error as SopsDecryptionError;
  expect(refused.message).toContain(name);
  for (const marker of MARKERS) expect(refused.message).not.toContain(marker);
  return refused;
}

describe('decryptSopsFile decrypts what sops encrypted, as sops decrypts it', () => {
  const macOnlyEncrypted = 'creation_rules:\n  - mac_only_encrypted: true\n';
  it.each<[string, { flags?: string[]; config?: string }]>([
    ['every value', {}],
    ['only data and stringData (--encrypted-regex)', { flags: onlyData }],
    ['a MAC over the encrypted values only', { flags: onlyData, config: macOnlyEncrypted }],
  ])('a Secret with stringData and data, %s', async (_what, options) => {
    const encrypted = await sops.encrypt('secret.yaml', SECRET, [other.recipient, key.recipient], options);
    if (options.config !== undefined) expect(encrypted).toContain('mac_only_encrypted: true');
    expect(encrypted).not.toContain('PlainMarker4r9');
    const plain = await ours('secret.yaml', encrypted);
    expect(documents(plain)).toEqual(documents(await sops.decrypt('secret.yaml', encrypted, [key.identity])));
    // Keys keep their order (the MAC covers it): "10" stays after password.
    const order = ['"password"', '"10"', '"2"'].map((quoted) => plain.indexOf(quoted));
    expect(order).toEqual([...order].sort((x, y) => x - y));
  });

  it('a YAML file of several documents, with every type sops restores', async () => {
    const source =
      'kind: ConfigMap\ndata:\n  count: 3\n  ratio: 0.25\n  big: 1.0e+21\n  on: true\n  "off": false\n' +
      '  list: [a, 7, 1.5]\n  nested: {deep: {value: x}}\n  kept_unencrypted: clear\n  empty: ""\n  none: null\n' +
      '---\nkind: Secret\nstringData:\n  password: PlainMarker4r9\n';
    const encrypted = await sops.encrypt('multi.yaml', source, [key.recipient]);
    const plain = await ours('multi.yaml', encrypted);
    expect(documents(plain)).toEqual(documents(await sops.decrypt('multi.yaml', encrypted, [key.identity])));
    expect(documents(plain)).toHaveLength(2);
  });

  it('a JSON file', async () => {
    const source = JSON.stringify({ a: { '20': 'x', b: [1, 2.5, true, 'PlainMarker4r9'] }, n: null });
    const encrypted = await sops.encrypt('values.json', source, [key.recipient]);
    const plain = await ours('values.json', encrypted);
    expect(JSON.parse(plain)).toEqual(
      JSON.parse(await sops.decrypt('values.json', encrypted, [key.identity])),
    );
  });

  it('a dotenv file and a binary file', async () => {
    const env = 'USER=admin\nPASSWORD=PlainMarker4r9\nMULTI=line1\\nline2\n';
    const encryptedEnv = await sops.encrypt('app.env', env, [key.recipient]);
    expect(await ours('app.env', encryptedEnv)).toBe(
      await sops.decrypt('app.env', encryptedEnv, [key.identity]),
    );
    const binary = 'raw bytes PlainMarker4r9\n\u00e9';
    const encryptedBinary = await sops.encrypt('key.pem', binary, [key.recipient]);
    expect(await ours('key.pem', encryptedBinary)).toBe(binary);
  });

  it('a file with a single key group, and one whose clear values are chosen by comments', async () => {
    const oneGroup = `creation_rules:\n  - key_groups:\n      - age: [${key.recipient}]\n`;
    const grouped = await sops.encrypt('secret.yaml', SECRET, [], { config: oneGroup });
    const plain = await ours('secret.yaml', grouped);
    expect(documents(plain)).toEqual(documents(await sops.decrypt('secret.yaml', grouped, [key.identity])));
    const commented = 'kind: ConfigMap\ndata:\n  # sops:clear\n  mode: fast\n  password: PlainMarker4r9\n';
    const byComment = await sops.encrypt('config.yaml', commented, [key.recipient], {
      config: 'creation_rules:\n  - unencrypted_comment_regex: sops:clear\n',
    });
    expect(byComment).toContain('mode: fast');
    const decrypted = await ours('config.yaml', byComment);
    expect(documents(decrypted)).toEqual(
      documents(await sops.decrypt('config.yaml', byComment, [key.identity])),
    );
  });

  it('leaves a file without sops metadata alone', async () => {
    expect(await decryptSopsFile('plain.yaml', Buffer.from(SECRET), [key.identity])).toBeUndefined();
    expect(await decryptSopsFile('broken.yaml', Buffer.from('a: [b\n'), [key.identity])).toBeUndefined();
  });
});

describe('decryptSopsFile refuses, naming the file and never a value', () => {
  let encrypted: string;
  beforeAll(async () => {
    encrypted = await sops.encrypt('secret.yaml', SECRET, [key.recipient], { flags: onlyData });
  }, SOPS_TIMEOUT_MS);

  it('a key that is none of the recipients', async () => {
    const refused = await refusal('secret.yaml', encrypted, [other.identity]);
    expect(refused.problem).toBe('no-matching-key');
    expect(refused.message).toMatch(/none of the 1 age identities .* is one of its 1 recipients/);
    expect((await refusal('secret.yaml', encrypted, [])).problem).toBe('no-matching-key');
  });

  it('a file split into several key groups, which is not supported', async () => {
    const twoGroups =
      `creation_rules:\n  - shamir_threshold: 2\n    key_groups:\n` +
      `      - age: [${key.recipient}]\n      - age: [${other.recipient}]\n`;
    const split = await sops.encrypt('secret.yaml', SECRET, [], { config: twoGroups });
    const refused = await refusal('secret.yaml', split, [key.identity, other.identity]);
    expect(refused.problem).toBe('unsupported');
    expect(refused.message).toContain('key groups');
  });

  it('a key written twice', async () => {
    const twice = encrypted.replace('type: Opaque\n', 'type: Opaque\ntype: Opaque\n');
    expect(twice).not.toBe(encrypted);
    const refused = await refusal('secret.yaml', twice);
    expect(refused.problem).toBe('malformed');
    expect(refused.message).toContain('a key twice');
  });

  it('a changed ciphertext', async () => {
    const tampered = encrypted.replace(
      /(password: ENC\[AES256_GCM,data:)(.)/,
      (_m, head: string, c: string) => `${head}${c === 'A' ? 'B' : 'A'}`,
    );
    expect(tampered).not.toBe(encrypted);
    const refused = await refusal('secret.yaml', tampered);
    expect(refused.problem).toBe('value-tampered');
    expect(refused.message).toContain('stringData.password');
  });

  it('a value moved to another key', async () => {
    const password = /password: (ENC\[[^\]]+\])/.exec(encrypted)?.[1] ?? '';
    const moved = encrypted.replace(/token: ENC\[[^\]]+\]/, `token: ${password}`);
    expect((await refusal('secret.yaml', moved)).problem).toBe('value-tampered');
  });

  it('a changed clear value, a removed value, a changed MAC', async () => {
    const renamed = encrypted.replace('name: db', 'name: dc');
    expect(renamed).not.toBe(encrypted);
    expect((await refusal('secret.yaml', renamed)).problem).toBe('mac-mismatch');
    const removed = encrypted.replace(/\n {4}"?2"?: ENC\[[^\]]+\]/, '');
    expect(removed).not.toBe(encrypted);
    expect((await refusal('secret.yaml', removed)).problem).toBe('mac-mismatch');
    const otherFile = await sops.encrypt('secret.yaml', SECRET.replace('db', 'dc'), [key.recipient]);
    const otherMac = /mac: (ENC\[[^\]]+\])/.exec(otherFile)?.[1] ?? '';
    const swappedMac = encrypted.replace(/mac: ENC\[[^\]]+\]/, `mac: ${otherMac}`);
    expect((await refusal('secret.yaml', swappedMac)).problem).toBe('value-tampered');
  });
});
