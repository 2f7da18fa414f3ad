import { ManifestDecodeError, decodeDocuments } from '../../src/manifests/decode-documents.js';

// Mapping keys as kubectl's reader makes them: go-yaml v2 keeps each key with its Go type, then
// sigs.k8s.io/yaml writes it as JSON text. The refusals and the kubectl outputs they mirror were
// checked with `kubectl create --dry-run=client -o json` (see test/cli/kubectl-fidelity.itest.ts).

const valueOf = (text: string) => decodeDocuments(text, 'keys.yaml')[0]?.value;
const refusal = (text: string) => {
  try {
    decodeDocuments(text, 'keys.yaml');
  } catch (error) {
    if (error instanceof ManifestDecodeError) return error.message;
    throw error;
  }
  throw new Error('not refused');
};

describe('mapping keys as kubectl reads them', () => {
  it('spells typed keys as text, and keys that are one Go key merge with the later winning', () => {
    expect(valueOf('on: a\nyes: b\n0x10: c\n16: d\n1.5: e\n~x: f\n')).toEqual({
      true: 'b',
      '16': 'd',
      '1.5': 'e',
      '~x': 'f',
    });
  });

  it('keeps scalar values with their types: numbers, booleans and null', () => {
    expect(valueOf('a: 1\nb: on\nc: ~\nd: 1.5\ne: [1, yes, null]\n')).toEqual({
      a: 1,
      b: true,
      c: null,
      d: 1.5,
      e: [1, true, null],
    });
  });

  it.each([
    [
      'an int and a float',
      'data:\n  1_000: a\n  1e3: b\n',
      'two keys "1000" in data, one an integer and one a float',
    ],
    [
      'an int and a float (1 and 1.0)',
      'm:\n  1: a\n  1.0: b\n',
      'two keys "1" in m, one an integer and one a float',
    ],
    [
      'a bool and a string',
      'on: a\n"true": b\n',
      'two keys "true" at the top of the document, one a boolean and one a string',
    ],
    [
      'a string and an int, nested in a list',
      'l:\n- "5": a\n  5: b\n',
      'two keys "5" in l[0], one a string and one an integer',
    ],
  ])('refuses %s that print as one key (kubectl keeps either at random)', (_what, text, message) => {
    expect(refusal(text)).toContain(message);
  });

  it.each([['~: a\n'], ['null: a\n']])('refuses a null key, as kubectl does: %p', (text) => {
    expect(refusal(text)).toContain('unsupported map key of type: <nil>');
  });

  it.each([
    ['? [a, b]\n: x\n', 'line 1'],
    ['[a]: x\n', 'line 1'],
    ['m:\n  ? {a: 1}\n  : x\n', 'line 2'],
    ['l: &l [a]\n*l : x\n', 'line 2'],
    ['m: {[a]: x}\n', 'line 1'],
  ])('refuses a collection as a key, with its line: %p', (text, line) => {
    const message = refusal(text);
    expect(message).toContain('invalid map key');
    expect(message).toContain(line);
  });

  it.each([
    ['? a\n? b\n: [c]\n', { a: null, b: ['c'] }],
    ['m: {a, b: [c]}\n', { m: { a: null, b: ['c'] } }],
    ['a:\nb: [1]\nc: {d: [e]}\n', { a: null, b: [1], c: { d: ['e'] } }],
    ['s: [a: [1], b]\n', { s: [{ a: [1] }, 'b'] }],
    ['"a,b": [x]\n', { 'a,b': ['x'] }],
  ])('never takes a value for a key: %p', (text, expected) => {
    expect(valueOf(text)).toEqual(expected);
  });

  it.each([['<<: 5\n'], ['<<: ~\n'], ['<<: [5]\n'], ['<<: [{a: 1}, on]\n']])(
    'refuses to merge what is not a mapping, in go-yaml words: %p',
    (text) => {
      expect(refusal(text)).toContain('map merge requires map or sequence of maps as the value');
    },
  );

  it('merges mappings with typed keys as go-yaml does: own keys win, typed keys keep their text', () => {
    expect(valueOf('base: &b {1: one, on: yes}\nm:\n  <<: *b\n  1: own\n')).toEqual({
      base: { '1': 'one', true: true },
      m: { '1': 'own', true: true },
    });
  });
});
