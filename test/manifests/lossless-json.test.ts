import { integerValue, parseJsonLossless, stringifyJson } from '../../src/manifests/lossless-json.js';
import { encodeGoJson } from '../../src/merge/encode-go-json.js';
import { goDeepEqual, goKind, goString } from '../../src/merge/go-value.js';
import { decodeDocuments } from '../../src/manifests/decode-documents.js';

// int64 integers beyond 2^53 as Go keeps them (docs/merge-semantics.md#2-values): a bigint between
// 2^53 and int64's bounds, a number everywhere else, so each value has one representation.

describe('lossless JSON', () => {
  it.each([
    ['9007199254740991', 9007199254740991],
    ['9007199254740992', 9007199254740992n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775807', 9223372036854775807n],
    ['9223372036854775808', 9223372036854775808],
    ['12', 12],
  ])('the integer literal %s is %p', (digits, value) => {
    expect(integerValue(digits)).toBe(value);
  });

  it('parses long integers exactly, and leaves strings, fractions and exponents alone', () => {
    const text =
      '{"a":9007199254740993,"s":"x 12345678901234567 y","f":0.12345678901234567,' +
      '"e":1234567890123456e3,"l":[-9223372036854775808, 1234567890123456],"q":"\\"12345678901234567"}';
    expect(parseJsonLossless(text)).toEqual({
      a: 9007199254740993n,
      s: 'x 12345678901234567 y',
      f: Number('0.12345678901234567'),
      e: 1234567890123456e3,
      l: [-9223372036854775808n, 1234567890123456],
      q: '"12345678901234567',
    });
  });

  it('throws what JSON.parse throws on invalid text', () => {
    expect(() => parseJsonLossless('{"a": 90071992547409930,}')).toThrow(SyntaxError);
  });

  it('writes bigints as digits, in plain JSON and in Go-encoded JSON', () => {
    const value = { b: 9007199254740993n, a: [1, -9223372036854775808n], s: 'x' };
    expect(stringifyJson(value)).toBe('{"b":9007199254740993,"a":[1,-9223372036854775808],"s":"x"}');
    expect(encodeGoJson(value)).toBe('{"a":[1,-9223372036854775808],"b":9007199254740993,"s":"x"}');
    expect(parseJsonLossless(stringifyJson(value))).toEqual(value);
  });

  it('still refuses a cycle, with or without a bigint in it', () => {
    const plain: Record<string, unknown> = { a: 1 };
    plain['self'] = plain;
    const withBigInt: Record<string, unknown> = { a: 9007199254740993n };
    withBigInt['self'] = withBigInt;
    expect(() => stringifyJson(plain)).toThrow(TypeError);
    expect(() => stringifyJson(withBigInt)).toThrow(/circular/i);
  });

  it('treats a bigint as a Go int in the merge engine', () => {
    expect(goKind(9007199254740993n)).toBe('int');
    expect(goString(-9223372036854775808n)).toBe('-9223372036854775808');
    expect(goDeepEqual({ a: 9007199254740993n }, { a: 9007199254740993n })).toBe(true);
    expect(goDeepEqual({ a: 9007199254740993n }, { a: 9007199254740992n })).toBe(false);
  });

  it('decodes YAML and JSON manifests without losing int64 integers', () => {
    const yaml = decodeDocuments(
      'a: 9007199254740993\nb: 0x7FFFFFFFFFFFFFFF\nc: 9223372036854775808\n',
      'x.yaml',
    );
    expect(yaml[0]?.value).toEqual({ a: 9007199254740993n, b: 9223372036854775807n, c: 9223372036854775808 });
    const json = decodeDocuments('{"a": 9007199254740993}', 'x.json');
    expect(json[0]?.value).toEqual({ a: 9007199254740993n });
  });
});

describe('int64 integers in the JSON merge patch (custom resources)', () => {
  it('are float64 in the patch as in kubectl’s, and compare as float64, while the annotation keeps them', async () => {
    const { computeApplyPatch } = await import('../../src/merge/compute-apply-patch.js');
    const manifest = {
      apiVersion: 'x.io/v1',
      kind: 'W',
      metadata: { name: 'w' },
      spec: { size: -9223372036854775808n },
    };
    const result = computeApplyPatch({
      manifest,
      current: { ...manifest, spec: { size: 1 } },
      meta: 'json-merge',
    } as never);
    expect(result.kind).toBe('patch');
    if (result.kind !== 'patch') return;
    expect(result.body).toContain('"spec":{"size":-9223372036854776000}');
    expect(result.body).toContain('\\"size\\":-9223372036854775808');
    // 2^53 + 1 and 2^53 are one float64: kubectl sends nothing for that change.
    const same = computeApplyPatch({
      manifest: { ...manifest, spec: { size: 9007199254740993n } },
      original: { ...manifest, spec: { size: 9007199254740993n } },
      current: { ...manifest, spec: { size: 9007199254740992n } },
      meta: 'json-merge',
    } as never);
    // (The patch still sets the annotation, which the current object lacks; the spec is not in it.)
    expect(same.kind === 'patch' ? same.body : '').not.toContain('"spec":');
  });
});
