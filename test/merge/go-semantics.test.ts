import { createThreeWayMergePatch } from '../../src/merge/create-three-way-merge-patch.js';
import { encodeGoJson } from '../../src/merge/encode-go-json.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { goSortByString, goString } from '../../src/merge/go-value.js';
import { MergeConflictError, MergeError } from '../../src/merge/merge-error.js';
import { schemaPatchMeta } from './schema-patch-meta.js';
import { vectorSchema } from './vector-schemas.js';

describe('Go encoding of patches and annotations (docs/merge-semantics.md section 11)', () => {
  it.each([
    [{ b: 1, a: [true, null], $patch: 'x' }, '{"$patch":"x","a":[true,null],"b":1}'],
    [{ s: '<a href="x">&\u2028\u2029' }, '{"s":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u2028\\u2029"}'],
    [{ s: 'tab\tnl\n\u0001é' }, '{"s":"tab\\tnl\\n\\u0001é"}'],
    [{ n: [1.5, 1e21, 1e-7, 0.000001, -0, 100] }, '{"n":[1.5,1e+21,1e-7,0.000001,0,100]}'],
    // Keys sort bytewise (UTF-8), where an astral character sorts after U+FFFD.
    [{ '\u{1F600}': 1, '\uFFFD': 2 }, '{"\uFFFD":2,"\u{1F600}":1}'],
    // Integer-like keys sort as text too ("10" before "9"), though a JS object lists them by number.
    [{ data: { '9': 'a', '10': 'b', x: '<' } }, '{"data":{"10":"b","9":"a","x":"\\u003c"}}'],
    [[{ '0': 1, b: 2 }, 'c'], '[{"0":1,"b":2},"c"]'],
    // A `__proto__` member is one like any other.
    [JSON.parse('{"b":1,"__proto__":{"x":"&"}}') as JsonObject, '{"__proto__":{"x":"\\u0026"},"b":1}'],
  ])('%j', (value, text) => {
    expect(encodeGoJson(value)).toBe(text);
  });

  it('writes an int64 beyond 2^53 by its digits, wherever it is', () => {
    const value = { z: [1, { big: 2n ** 60n, '<': true }], a: -(2n ** 62n) };
    expect(encodeGoJson(value)).toBe(
      '{"a":-4611686018427387904,"z":[1,{"\\u003c":true,"big":1152921504606846976}]}',
    );
  });

  it('escapes every text alike, one after another', () => {
    // A text with an escaped character, then texts with one later and none: each one escaped whole.
    expect(encodeGoJson({ a: '&', b: 'xxxxxxxxxxxxxxxx' })).toBe('{"a":"\\u0026","b":"xxxxxxxxxxxxxxxx"}');
    expect(encodeGoJson({ a: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx>' })).toBe(
      '{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\u003e"}',
    );
    expect(encodeGoJson({ a: '<' })).toBe('{"a":"\\u003c"}');
  });
});

describe("Go's %v and sort order (docs/merge-semantics.md section 2)", () => {
  it.each([
    [1000000, '1000000'],
    [1.5, '1.5'],
    [1234567.5, '1.2345675e+06'],
    [0.00001, '1e-05'],
    [true, 'true'],
    [null, '<nil>'],
  ])('%p prints as %s', (value, text) => {
    expect(goString(value)).toBe(text);
  });

  it('reverses equal keys in short lists, as an insertion sort with a <= comparator does', () => {
    const items = [
      { k: 'b', i: 0 },
      { k: 'a', i: 1 },
      { k: 'b', i: 2 },
    ];
    expect(goSortByString(items, (item) => item.k).map((item) => item.i)).toEqual([1, 2, 0]);
  });
});

describe('overwrite: false (docs/merge-semantics.md section 5)', () => {
  const meta = schemaPatchMeta(vectorSchema('MergeItem'));

  it('refuses to overwrite a value someone changed since the last apply', () => {
    expect(() =>
      createThreeWayMergePatch({ original: { name: 1 }, modified: { name: 2 }, current: { name: 3 } }, meta, {
        overwrite: false,
      }),
    ).toThrow(MergeConflictError);
  });

  it('allows the same patch when the live value was not changed by others', () => {
    const patch = createThreeWayMergePatch(
      {
        original: { name: 1, simpleMap: { a: '1' } },
        modified: { name: 2, simpleMap: { a: '1' } },
        current: { name: 1, simpleMap: { a: '1', b: '2' } },
      },
      meta,
      { overwrite: false },
    );
    expect(patch).toEqual({ name: 2 });
  });

  it('never conflicts on merged lists of scalars', () => {
    const patch = createThreeWayMergePatch(
      {
        original: { mergingIntList: [1] },
        modified: { mergingIntList: [1, 2] },
        current: { mergingIntList: [1, 3] },
      },
      meta,
      { overwrite: false },
    );
    expect(encodeGoJson(patch)).toBe('{"$setElementOrder/mergingIntList":[1,2],"mergingIntList":[2]}');
  });
});

describe('refused documents', () => {
  const meta = schemaPatchMeta(vectorSchema('MergeItem'));
  it.each([
    [{ original: null, modified: [], current: {} }, /invalid JSON document/],
    [
      { original: {}, modified: { mergingList: [{ value: 1 }] }, current: { mergingList: [{ name: 1 }] } },
      /does not contain declared merge key: name/,
    ],
    [
      { original: {}, modified: { mergingIntList: [1, 'a'] }, current: { mergingIntList: [1] } },
      /list element types are not identical/,
    ],
  ])('%j', (input, message) => {
    expect(() => createThreeWayMergePatch(input, meta)).toThrow(MergeError);
    expect(() => createThreeWayMergePatch(input, meta)).toThrow(message);
  });
});

describe('what the delta reads of the live object', () => {
  const meta = schemaPatchMeta(vectorSchema('Deployment'));
  const live = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x', uid: 'u', managedFields: [{ manager: 'kubectl' }], labels: { a: 'b' } },
    spec: { replicas: 3, minReadySeconds: 5 },
    status: { replicas: 3 },
  };

  it('is what the manifest has: the same patch whatever else the live object carries', () => {
    const original = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x', labels: { a: 'b', c: 'd' } },
    };
    const modified = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x', labels: { a: 'b' } },
      spec: { replicas: 2 },
    };
    const bare = { metadata: { name: 'x', labels: { a: 'b' } }, spec: { replicas: 3, minReadySeconds: 5 } };
    const before = JSON.stringify(live);
    const patch = encodeGoJson(createThreeWayMergePatch({ original, modified, current: live }, meta));
    expect(patch).toBe(
      encodeGoJson(
        createThreeWayMergePatch(
          { original, modified, current: { ...bare, apiVersion: 'apps/v1', kind: 'Deployment' } },
          meta,
        ),
      ),
    );
    expect(patch).toBe('{"metadata":{"labels":{"c":null}},"spec":{"replicas":2}}');
    // Pure: nothing of the live object is changed or dropped.
    expect(JSON.stringify(live)).toBe(before);
  });
});
