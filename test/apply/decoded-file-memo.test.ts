import { decodeManifestFiles, type ManifestEntry } from '../../src/manifests/decode-manifest-files.js';
import { createDecodedFileMemo } from '../../src/apply/decoded-file-memo.js';
import { manifestLimits } from '../../src/manifests/manifest-limits.js';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  mode: 0644\n  enabled: yes\n`;

const values = (entries: readonly ManifestEntry[]) =>
  entries.map((entry) => (entry.type === 'object' ? entry.value : entry.error.message));

describe('decodeManifestFiles with a memo of decoded texts', () => {
  it('decodes a text once: a later set with the same text reads the same objects, under its own path', () => {
    const memo = createDecodedFileMemo();
    const text = `${configMap('a')}---\n${configMap('b')}`;
    const first = decodeManifestFiles([{ path: 'one/app.yaml', text }], manifestLimits(), memo);
    const again = decodeManifestFiles([{ path: 'two/app.yaml', text }], manifestLimits(), memo);
    const fresh = decodeManifestFiles([{ path: 'two/app.yaml', text }], manifestLimits());

    // The same answer as without the memo (go-yaml v2's reading of 0644 and yes included)...
    expect(again).toEqual(fresh);
    expect(values(again)[0]).toMatchObject({ data: { mode: 420, enabled: true } });
    // ...from the objects decoded the first time, each with the source of the set that read it.
    expect(values(again)[1]).toBe(values(first)[1]);
    expect(again.map((entry) => entry.type === 'object' && entry.source)).toEqual([
      { file: 'two/app.yaml', documentIndex: 0 },
      { file: 'two/app.yaml', documentIndex: 1 },
    ]);
  });

  it('keeps them frozen: changing an object one set read throws instead of changing another set', () => {
    const memo = createDecodedFileMemo();
    const [entry] = decodeManifestFiles([{ path: 'a.yaml', text: configMap('a') }], manifestLimits(), memo);
    if (entry?.type !== 'object') throw new Error('expected an object');
    const metadata = entry.value['metadata'] as Record<string, unknown>;
    expect(() => {
      metadata['namespace'] = 'other';
    }).toThrow(TypeError);
    const [later] = decodeManifestFiles([{ path: 'b.yaml', text: configMap('a') }], manifestLimits(), memo);
    expect(later?.type === 'object' && later.value['metadata']).toEqual({ name: 'a' });
  });

  it('does not keep a file that failed: the error names the path of each set that has it', () => {
    const memo = createDecodedFileMemo();
    const text = 'apiVersion: v1\nkind: [unclosed\n';
    const first = decodeManifestFiles([{ path: 'one/bad.yaml', text }], manifestLimits(), memo);
    const again = decodeManifestFiles([{ path: 'two/bad.yaml', text }], manifestLimits(), memo);
    expect(first[0]).toMatchObject({ type: 'error', error: { source: { file: 'one/bad.yaml' } } });
    expect(again[0]).toMatchObject({ type: 'error', error: { source: { file: 'two/bad.yaml' } } });
  });

  it("refuses a kept text over a later set's smaller limits, as decoding it would", () => {
    const memo = createDecodedFileMemo();
    // 171 bytes of text, whose aliases decode to between 260 and 300 bytes of keys and values.
    const text =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n' +
      `  labels: &l {k1: ${'v'.repeat(20)}, k2: ${'v'.repeat(20)}, k3: ${'v'.repeat(21)}}\n` +
      '  annotations: *l\ndata: *l\n';
    const files = [{ path: 'a.yaml', text }];
    expect(decodeManifestFiles(files, manifestLimits(), memo)).toMatchObject([{ type: 'object' }]);
    const tight = manifestLimits({ maxFileBytes: 10_000, maxSetBytes: 260 });
    const refused = decodeManifestFiles(files, tight, memo);
    expect(refused).toEqual(decodeManifestFiles(files, tight));
    expect(refused).toMatchObject([{ type: 'error', error: { code: 'set-too-large' } }]);
    const roomy = manifestLimits({ maxFileBytes: 10_000, maxSetBytes: 300 });
    expect(decodeManifestFiles(files, roomy, memo)).toMatchObject([{ type: 'object' }]);
  });

  it('drops the least recently used texts past its bound of characters', () => {
    const memo = createDecodedFileMemo(configMap('a').length * 2);
    const decode = (name: string) =>
      values(decodeManifestFiles([{ path: 'f.yaml', text: configMap(name) }], manifestLimits(), memo))[0];
    const a = decode('a');
    decode('b');
    expect(decode('a')).toBe(a);
    decode('c');
    decode('d');
    expect(decode('a')).not.toBe(a);
  });
});
