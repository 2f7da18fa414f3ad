import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { applyStrategicMergePatch } from '../../src/merge/apply-strategic-merge-patch.js';
import { createThreeWayMergePatch } from '../../src/merge/create-three-way-merge-patch.js';
import { encodeGoJson } from '../../src/merge/encode-go-json.js';
import { applyJsonMergePatch, createThreeWayJsonMergePatch } from '../../src/merge/json-merge-patch.js';
import { schemaPatchMeta } from './schema-patch-meta.js';
import type { JsonObject, JsonValue } from '../../src/manifests/json-value.js';
import { vectorSchema } from './vector-schemas.js';

/**
 * One vector of test/fixtures/merge (docs/merge-semantics.md#14-test-vectors), with the exact text of
 * its `patch:` line.
 */
interface Vector {
  readonly doc: JsonObject & { id: string };
  readonly patchText: string | undefined;
}

function loadVectors(file: string): Vector[] {
  const text = readFileSync(new URL(`../fixtures/merge/${file}`, import.meta.url), 'utf8');
  // The vectors are JSON written as YAML flow style, so a JSON-semantics load is faithful.
  return text.split(/^---$/m).map((raw) => {
    const doc = yaml.load(raw, { schema: yaml.JSON_SCHEMA }) as JsonObject & { id: string };
    const patchLine = /^patch: (.*)$/m.exec(raw);
    return { doc, patchText: patchLine?.[1]?.trim() };
  });
}

const byId = (vectors: Vector[]) => vectors.map((vector) => [vector.doc.id, vector] as const);

describe('three-way strategic merge patch (vectors U, K and E)', () => {
  const vectors = [
    ...loadVectors('upstream-strategic-merge.yaml'),
    ...loadVectors('kubernetes-strategic-merge.yaml'),
    ...loadVectors('end-to-end.yaml').filter((vector) => vector.doc.schema !== undefined),
  ];
  it.each(byId(vectors))('%s', (_id, { doc, patchText }) => {
    const meta = schemaPatchMeta(vectorSchema(doc.schema as string));
    const input = {
      original: doc.original ?? null,
      modified: doc.modified as JsonValue,
      current: doc.current as JsonValue,
    };
    const frozen = JSON.stringify(input);
    if (doc.error !== undefined) {
      expect(() => createThreeWayMergePatch(input, meta)).toThrow(/unable to find api field/);
      return;
    }
    const patch = createThreeWayMergePatch(input, meta);
    expect(encodeGoJson(patch)).toBe(patchText);
    expect(JSON.stringify(input)).toBe(frozen);
    if (doc.result !== undefined) {
      expect(applyStrategicMergePatch(input.current, patch, meta)).toEqual(doc.result);
    }
  });
});

describe('strategic merge patch applied by the server (vectors S)', () => {
  const meta = schemaPatchMeta(vectorSchema('MergeItem'));
  it.each(byId(loadVectors('server-apply.yaml')))('%s', (_id, { doc }) => {
    const live = doc.live as JsonValue;
    const patch = doc.patch as JsonValue;
    if (doc.error !== undefined) {
      const expected = String(doc.error).replace('message contains: ', '');
      expect(() => applyStrategicMergePatch(live, patch, meta)).toThrow(expected);
      return;
    }
    expect(applyStrategicMergePatch(live, patch, meta)).toEqual(doc.result);
  });
});

describe('three-way JSON merge patch (vectors J)', () => {
  it.each(byId(loadVectors('json-merge.yaml')))('%s', (_id, { doc, patchText }) => {
    const input = {
      original: doc.original ?? null,
      modified: doc.modified as JsonValue,
      current: doc.current as JsonValue,
    };
    const patch = createThreeWayJsonMergePatch(input);
    expect(encodeGoJson(patch)).toBe(patchText);
    expect(applyJsonMergePatch(input.current, patch)).toEqual(doc.result);
  });
});
