import { decodeDocuments } from '../../src/manifests/decode-documents.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { generateSequence } from './generate-sequence.js';
import { renderYaml } from './yaml11-scalars.js';

describe('YAML 1.1 lines in a differential manifest', () => {
  const manifest: JsonObject = {
    apiVersion: 'g.example/v1',
    kind: 'Widget',
    metadata: { name: 'w', labels: { on: 'yes' } },
    spec: { color: '0644', items: [{ name: 'one', tags: [] }], empty: {}, gone: null },
  };

  it('keeps every other value as it was and reads the added lines by YAML 1.1 rules', () => {
    const text = renderYaml(manifest, {
      path: ['spec', 'yaml11'],
      entries: [
        ['on', '0644'],
        ['0x1F', 'off'],
        ['1.5', '1_000'],
      ],
    });
    const [document] = decodeDocuments(text, 'w.yaml');
    const spec = { ...(manifest.spec as JsonObject), yaml11: { true: 420, '31': false, '1.5': 1000 } };
    expect(document?.value).toEqual({ ...manifest, spec });
  });

  it('makes a mapping where the path has none', () => {
    const text = renderYaml({ ...manifest, data: null }, { path: ['data'], entries: [['y', '"v"']] });
    const [document] = decodeDocuments(text, 'w.yaml');
    expect((document?.value as JsonObject).data).toEqual({ true: 'v' });
  });

  it('gives the same sequence for the same seed, with YAML lines on some kinds', () => {
    const seeds = Array.from({ length: 140 }, (_, i) => 20250605 + i);
    const withLines = seeds.filter((seed) =>
      generateSequence(seed, 'g.example').steps.some((s) => s.type === 'apply' && s.yaml11 !== undefined),
    );
    expect(withLines.length).toBeGreaterThan(5);
    expect(generateSequence(20250605, 'g.example')).toEqual(generateSequence(20250605, 'g.example'));
  });
});
