import yaml from 'js-yaml';
import {
  allowedAliasRatio,
  isExcessiveAliasing,
  measureExpansion,
} from '../../src/input/measure-expansion.js';
import { anchorReuseList, mergeKeyBomb, nestedListBomb, nestedMapBomb } from '../manifests/yaml-bombs.js';

const parse = (text: string): unknown => yaml.load(text);
const NO_BYTE_LIMIT = Number.POSITIVE_INFINITY;

/** One list anchored with `size` items, then a list of `aliases` aliases to it. */
const flatAliases = (size: number, aliases: number) =>
  `a: &a [${Array<string>(size).fill('x').join(', ')}]\nb: [${Array<string>(aliases).fill('*a').join(', ')}]\n`;

describe('allowedAliasRatio (go-yaml decode.go)', () => {
  it('allows 99% up to 400,000 decoded nodes, 10% from 4,000,000, and falls linearly between', () => {
    expect(allowedAliasRatio(1000)).toBe(0.99);
    expect(allowedAliasRatio(400_000)).toBe(0.99);
    expect(allowedAliasRatio(2_200_000)).toBeCloseTo(0.545, 10);
    expect(allowedAliasRatio(4_000_000)).toBe(0.1);
    expect(allowedAliasRatio(1e9)).toBe(0.1);
  });

  it('refuses only past 100 aliased and 1000 decoded nodes', () => {
    expect(isExcessiveAliasing(100, 101)).toBe(false);
    expect(isExcessiveAliasing(999, 1000)).toBe(false);
    expect(isExcessiveAliasing(1000, 1001)).toBe(true);
    expect(isExcessiveAliasing(0, Number.POSITIVE_INFINITY)).toBe(true);
  });
});

describe('measureExpansion', () => {
  it('counts nodes as go-yaml does: document, keys, values, alias nodes, and what they expand to', () => {
    // document 1, mapping 1, key a 1, [x, y] 3, key b 1, [*a, *a] 1 + 2 * (1 alias + 3 aliased).
    expect(measureExpansion(parse('a: &a [x, y]\nb: [*a, *a]\n'), NO_BYTE_LIMIT)).toEqual({
      ok: true,
      nodes: 16,
      aliasNodes: 6,
      contentBytes: expect.any(Number),
    });
  });

  // Each pair checked against gopkg.in/yaml.v2 (go.yaml.in/yaml/v2 v2.4.4, which kubectl uses):
  // the first is decoded, the second is "document contains excessive aliasing".
  it('draws the line where go-yaml does: 199 aliases of 200 items pass, 200 do not', () => {
    expect(measureExpansion(parse(flatAliases(200, 199)), NO_BYTE_LIMIT).ok).toBe(true);
    const refused = measureExpansion(parse(flatAliases(200, 200)), NO_BYTE_LIMIT);
    expect(refused).toMatchObject({ ok: false, kind: 'excessive-aliasing' });
  });

  it.each([
    ['nested lists', nestedListBomb()],
    ['nested maps', nestedMapBomb()],
    ['merge keys', mergeKeyBomb()],
    ['a deep chain of pairs', nestedListBomb(60, 2)],
  ])('refuses a billion-laughs document of %s without expanding it', (_shape, text) => {
    expect(text.length).toBeLessThan(2048);
    const started = performance.now();
    const measure = measureExpansion(parse(text), NO_BYTE_LIMIT);
    expect(measure).toMatchObject({ ok: false, kind: 'excessive-aliasing' });
    // It stops at the first alias that tips the balance: a few thousand nodes, not billions.
    expect(measure.nodes).toBeLessThan(1e6);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('passes a file that reuses small anchors in every object', () => {
    const measure = measureExpansion(parse(anchorReuseList()), NO_BYTE_LIMIT);
    expect(measure.ok).toBe(true);
    expect(measure.aliasNodes).toBeGreaterThan(5000);
  });

  it('bounds the expanded content even when the aliases are few: one big string many times', () => {
    const text = `big: &big "${'x'.repeat(100_000)}"\ncopies: [${Array<string>(50).fill('*big').join(', ')}]\n`;
    const document = parse(text);
    expect(measureExpansion(document, 6_000_000)).toMatchObject({ ok: true });
    expect(measureExpansion(document, 1_000_000)).toMatchObject({ ok: false, kind: 'too-large' });
  });

  it('measures content at most as large as the text when nothing is aliased', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: "v"\n  n: 1e3\n  e: []\n';
    const measure = measureExpansion(parse(text), NO_BYTE_LIMIT);
    expect(measure.ok && measure.contentBytes).toBeLessThanOrEqual(text.length);
  });
});
