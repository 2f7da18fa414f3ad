import { decodeDocuments } from '../../src/manifests/decode-documents.js';
import { readerCases } from './kubectl-reader-cases.js';

// Our reader on the cases kubectl's reader was found to disagree on (kubectl-reader-cases.ts); the
// integration test holds kubectl to the same verdicts.

const decodeData = (data: string) =>
  decodeDocuments(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n${data}\n`, 'cm.yaml');

describe("our reader gives kubectl's verdict, in kubectl's words", () => {
  it.each(readerCases.map((c) => [c.what, c] as const))('%s', (_what, c) => {
    if (c.verdict === 'applied') {
      expect(decodeData(c.data)[0]?.value).toMatchObject({ data: c.value });
      return;
    }
    expect(() => decodeData(c.data)).toThrow(`cm.yaml (document 0) line 6 column`);
    expect(() => decodeData(c.data)).toThrow(c.refusal);
  });
});

describe('go-yaml v2 beside js-yaml', () => {
  it.each([
    ['s1: !!float 3', { s1: 3 }],
    ['s1: !!float "0x10"', { s1: 16 }],
    ['s1: !!float 1_000', { s1: 1000 }],
    ['s1: !!float 1.5', { s1: 1.5 }],
    // A `?` ends a plain scalar only in a flow collection, and only after its first character.
    ['s1: http://x.example/a?b=c#d', { s1: 'http://x.example/a?b=c#d' }],
    ['s1: {a: "http://x.example/a?b=c"}', { s1: { a: 'http://x.example/a?b=c' } }],
    ['s1: [?b]', { s1: ['?b'] }],
    ['s1:\n  - a?b\n  - {c: d}', { s1: ['a?b', { c: 'd' }] }],
  ])('%s reads as kubectl reads it', (text, value) => {
    expect(decodeDocuments(`${text}\n`, 'x.yaml')[0]?.value).toEqual(value);
  });

  it.each([
    ['s1: !!float x', /cannot resolve a node with !<tag:yaml.org,2002:float> explicit tag/],
    ['s1: {a?b: c}', /line 1 column 7: did not find expected ',' or '}'/],
    ['s1: {a: x\n  y?z}', /line 2 column 4: did not find expected ',' or '}'/],
    ['s1: {a: !!str x?y}', /line 1 column 16: did not find expected ',' or '}'/],
  ])('%s is refused, as kubectl refuses it', (text, message) => {
    expect(() => decodeDocuments(`${text}\n`, 'x.yaml')).toThrow(message);
  });
});
