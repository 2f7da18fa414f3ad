import {
  ManifestDecodeError,
  ManifestExpansionError,
  decodeDocuments,
} from '../../src/manifests/decode-documents.js';
import { anchorReuseList, mergeKeyBomb, nestedListBomb, nestedMapBomb } from './yaml-bombs.js';

const valueOf = (text: string) => decodeDocuments(text, 'test.yaml')[0]?.value;

describe('decodeDocuments resolves plain scalars as go-yaml v2 (kubectl) does', () => {
  it.each([
    ['yes', true],
    ['Yes', true],
    ['YES', true],
    ['y', true],
    ['Y', true],
    ['on', true],
    ['ON', true],
    ['True', true],
    ['no', false],
    ['N', false],
    ['off', false],
    ['Off', false],
    ['FALSE', false],
    ['tRUE', 'tRUE'],
    ['yEs', 'yEs'],
    ['0644', 420],
    ['0o17', 15],
    ['0x1F', 31],
    ['0b101', 5],
    ['-0b11', -3],
    ['08', 8],
    ['1_000', 1000],
    ['+12', 12],
    ['1e3', 1000],
    ['1.0', 1],
    ['.5', 0.5],
    ['1.5', 1.5],
    ['~', null],
    ['null', null],
    ['Null', null],
    ['nULL', 'nULL'],
    ['2024-01-01', '2024-01-01'],
    ['1:20', '1:20'],
    ['"yes"', 'yes'],
    ["'0644'", '0644'],
    ['!!str 12', '12'],
  ])('%s → %p', (text, expected) => {
    expect(valueOf(`v: ${text}\n`)).toEqual({ v: expected });
  });

  it('turns boolean and numeric keys into their JSON string forms', () => {
    expect(valueOf('on: push\nn: 1\n010: x\n')).toEqual({ true: 'push', false: 1, '8': 'x' });
  });

  it('lets a repeated key overwrite the earlier one, as non-strict go-yaml v2 does', () => {
    expect(valueOf('a: 1\na: 2\n')).toEqual({ a: 2 });
  });

  it('supports merge keys', () => {
    expect(valueOf('base: &b {x: 1}\nderived:\n  <<: *b\n  z: 2\n')).toEqual({
      base: { x: 1 },
      derived: { x: 1, z: 2 },
    });
  });

  it('reads every document and gives empty ones the value null', () => {
    const docs = decodeDocuments('---\na: 1\n---\n# nothing\n---\nb: 2\n', 'test.yaml');
    expect(docs).toEqual([
      expect.objectContaining({ index: 0, value: { a: 1 } }),
      expect.objectContaining({ index: 1, value: null }),
      expect.objectContaining({ index: 2, value: { b: 2 } }),
    ]);
  });

  it('parses text that starts with { as JSON', () => {
    expect(decodeDocuments('  {"a": "yes", "b": 010}'.replace('010', '10'), 'x.json')).toEqual([
      expect.objectContaining({ index: 0, value: { a: 'yes', b: 10 } }),
    ]);
  });
});

describe('decodeDocuments errors', () => {
  it('names the file, the document and the line', () => {
    let caught: unknown;
    try {
      decodeDocuments('a: 1\n---\nb: [\n', 'bad.yaml');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ManifestDecodeError);
    const error = caught as ManifestDecodeError;
    expect(error.documentIndex).toBe(1);
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/^bad\.yaml \(document 1\) line 4 column \d+: /);
  });

  it('refuses .inf and .nan, which kubectl cannot encode as JSON', () => {
    expect(() => decodeDocuments('a: 1\n---\nb: .inf\n', 'bad.yaml')).toThrow(
      /bad\.yaml \(document 1\): json: unsupported value/,
    );
  });

  it('reports invalid JSON', () => {
    expect(() => decodeDocuments('{"a": ', 'bad.json')).toThrow(ManifestDecodeError);
  });
});

describe('decodeDocuments refuses excessive aliasing as kubectl does', () => {
  it.each([
    ['nested lists', nestedListBomb()],
    ['nested maps', nestedMapBomb()],
    ['merge keys', mergeKeyBomb()],
  ])('a billion-laughs document of %s, naming the file and the document', (_shape, bomb) => {
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---\n${bomb}`;
    let caught: unknown;
    try {
      decodeDocuments(text, 'laughs.yaml');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ManifestExpansionError);
    expect(caught).toMatchObject({ documentIndex: 1, kind: 'excessive-aliasing', intent: 'stalled' });
    expect((caught as Error).message).toMatch(
      /^laughs\.yaml \(document 1\): document contains excessive aliasing: /,
    );
  });

  // Both checked against go.yaml.in/yaml/v2 v2.4.4 (kubectl's reader): go-yaml decodes every merged
  // mapping in full each time, although the merged keys collapse into one mapping.
  it('counts a merged mapping in full each time it is merged, drawing the line where go-yaml does', () => {
    const merges = (count: number) =>
      `big: &big [${Array<string>(1000).fill('x').join(', ')}]\na: &a {p: *big, q: y}\nlist:\n` +
      Array<string>(count).fill('- <<: *a\n  own: 1\n').join('');
    expect(decodeDocuments(merges(162), 'merges.yaml')).toHaveLength(1);
    expect(() => decodeDocuments(merges(163), 'merges.yaml')).toThrow(/excessive aliasing/);
  });

  it('refuses merging the same mapping again and again, which leaves few keys but costs go-yaml each time', () => {
    const levels = ['l0: &l0 {a: lol, b: lol}'];
    for (let level = 1; level <= 3; level += 1) {
      levels.push(
        `l${level}: &l${level} {<<: [${Array<string>(9)
          .fill(`*l${level - 1}`)
          .join(', ')}]}`,
      );
    }
    expect(() => decodeDocuments(levels.join('\n'), 'merges.yaml')).toThrow(/excessive aliasing/);
    expect(decodeDocuments(levels.slice(0, 3).join('\n'), 'merges.yaml')).toHaveLength(1);
  });

  it('loads a file of many documents each merging a small anchor, as kubectl does', () => {
    const defaults = Array.from({ length: 20 }, (_, index) => `d${index}: v`).join(', ');
    const documents = Array.from(
      { length: 1000 },
      (_, index) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${index}}\n` +
        `defaults: &d {${defaults}}\ndata:\n  <<: *d\n  own: x\n`,
    );
    const decoded = decodeDocuments(documents.join('---\n'), 'many.yaml');
    expect(decoded).toHaveLength(1000);
    expect(decoded[999]?.value).toMatchObject({ data: { d0: 'v', d19: 'v', own: 'x' } });
  });

  it('refuses a file whose merge keys copy one wide mapping over and over, before copying much', () => {
    const keys = Array.from({ length: 1000 }, (_, index) => `k${index}: x`).join(', ');
    const text = `a: &a {${keys}}\nl:\n${'- <<: *a\n'.repeat(2000)}`;
    expect(() => decodeDocuments(text, 'wide.yaml')).toThrow(
      /^wide\.yaml \(document 0\): document contains excessive aliasing/,
    );
  });

  it('loads a file that reuses small anchors in every object, each alias a full copy', () => {
    const [list] = decodeDocuments(anchorReuseList(), 'exporters.yaml');
    const items = (list?.value as { items: { metadata: { name: string; labels: object } }[] }).items;
    expect(items).toHaveLength(150);
    expect(items[149]?.metadata).toEqual({
      name: 'exporter-149',
      labels: { 'app.kubernetes.io/part-of': 'kube-prometheus', 'app.kubernetes.io/managed-by': 'applyset' },
    });
    // Copies, not shared objects: later steps may change one object without touching the others.
    expect(items[149]?.metadata.labels).not.toBe(items[0]?.metadata.labels);
  });

  it('refuses a document whose few aliases repeat a large string past the limit per document', () => {
    const text = `a: &a "${'x'.repeat(1000)}"\nb: [${Array<string>(20).fill('*a').join(', ')}]\n`;
    expect(() => decodeDocuments(text, 'big.yaml', { maxDocumentBytes: 10_000, maxTotalBytes: 1e9 })).toThrow(
      /^big\.yaml \(document 0\): the document decodes to more than 9\.8 KiB of keys and values once its aliases are expanded/,
    );
    expect(decodeDocuments(text, 'big.yaml', { maxDocumentBytes: 30_000, maxTotalBytes: 1e9 })).toHaveLength(
      1,
    );
  });

  it('refuses the document that takes the decoded total of the set past its limit', () => {
    const doc = `data: "${'x'.repeat(600)}"\n`;
    expect(() =>
      decodeDocuments(`${doc}---\n${doc}`, 'two.yaml', { maxDocumentBytes: 1000, maxTotalBytes: 1000 }),
    ).toThrow(/^two\.yaml \(document 1\): the documents of the set decode to more than 1000 bytes/);
  });
});
