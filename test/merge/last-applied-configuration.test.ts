import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { computeApplyPatch } from '../../src/merge/compute-apply-patch.js';
import {
  LAST_APPLIED_ANNOTATION,
  buildCreateBody,
  buildLastAppliedConfiguration,
  readLastAppliedConfiguration,
} from '../../src/merge/last-applied-configuration.js';
import { schemaPatchMeta } from './schema-patch-meta.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { vectorSchema } from './vector-schemas.js';

const vectors = new Map(
  readFileSync(new URL('../fixtures/merge/end-to-end.yaml', import.meta.url), 'utf8')
    .split(/^---$/m)
    .map((raw) => {
      const doc = yaml.load(raw, { schema: yaml.JSON_SCHEMA }) as JsonObject;
      return [doc.id as string, { doc, patchText: /^patch: (.*)$/m.exec(raw)?.[1] }] as const;
    }),
);
const vector = (id: string) => {
  const found = vectors.get(id);
  if (found === undefined) throw new Error(`no vector ${id}`);
  return found;
};
const withNamespace = (manifest: JsonObject): JsonObject => ({
  ...manifest,
  metadata: { ...(manifest.metadata as JsonObject), namespace: 'default' },
});
const configMapMeta = schemaPatchMeta(vectorSchema('ConfigMap'));

describe('the last-applied-configuration annotation (docs/merge-semantics.md section 11, E01)', () => {
  const { doc } = vector('E01');
  const manifest = withNamespace(doc.manifest as JsonObject);

  it('is the Go encoding of the manifest with "annotations":{} and a trailing newline', () => {
    expect(buildLastAppliedConfiguration(manifest).annotation).toBe(doc.annotation_value);
  });

  it('is embedded in the create body', () => {
    expect(buildCreateBody(buildLastAppliedConfiguration(manifest).modified)).toEqual(doc.create_body);
  });

  it('does not change the manifest and ignores an old annotation in it', () => {
    const withOld: JsonObject = {
      ...manifest,
      metadata: { ...(manifest.metadata as JsonObject), annotations: { [LAST_APPLIED_ANNOTATION]: 'old' } },
    };
    const frozen = JSON.stringify(withOld);
    expect(buildLastAppliedConfiguration(withOld).annotation).toBe(doc.annotation_value);
    expect(JSON.stringify(withOld)).toBe(frozen);
  });

  it('keeps explicit nulls in the annotation but not in the create body', () => {
    const { annotation, modified } = buildLastAppliedConfiguration({
      kind: 'X',
      metadata: { name: 'a' },
      spec: { x: null },
    });
    expect(annotation).toBe('{"kind":"X","metadata":{"annotations":{},"name":"a"},"spec":{"x":null}}\n');
    expect(buildCreateBody(modified).spec).toEqual({});
  });

  it('is read back from the live object, and is absent when the live object has none', () => {
    const { modified } = buildLastAppliedConfiguration(manifest);
    expect(readLastAppliedConfiguration(modified)).toEqual({
      ...manifest,
      metadata: { ...(manifest.metadata as JsonObject), annotations: {} },
    });
    expect(readLastAppliedConfiguration({ metadata: { name: 'x' } })).toBeNull();
  });
});

describe('computeApplyPatch', () => {
  it('rewrites the annotation along with the change (E02)', () => {
    const { doc, patchText } = vector('E02');
    const current = doc.current as JsonObject;
    const manifest = { ...(doc.original as JsonObject), data: { a: '2', url: 'http://x/?a=1&b=2' } };
    const result = computeApplyPatch({ manifest, current, meta: configMapMeta });
    expect(result).toMatchObject({
      kind: 'patch',
      patchType: 'application/strategic-merge-patch+json',
      body: patchText,
    });
  });

  it('reports unchanged when the manifest was applied already (E03)', () => {
    const { doc } = vector('E03');
    const result = computeApplyPatch({
      manifest: doc.original as JsonObject,
      current: doc.current as JsonObject,
      meta: configMapMeta,
    });
    expect(result.kind).toBe('unchanged');
  });

  it('sends a merge patch for custom resources', () => {
    const manifest: JsonObject = {
      apiVersion: 'x.io/v1',
      kind: 'Thing',
      metadata: { name: 't', namespace: 'default' },
      spec: { size: 2 },
    };
    const first = computeApplyPatch({
      manifest,
      current: { ...manifest, spec: { size: 1 } },
      meta: 'json-merge',
    });
    expect(first).toMatchObject({ kind: 'patch', patchType: 'application/merge-patch+json' });
    if (first.kind !== 'patch') return;
    expect(first.patch.spec).toEqual({ size: 2 });
    expect(computeApplyPatch({ manifest, current: first.modified, meta: 'json-merge' }).kind).toBe(
      'unchanged',
    );
  });
});
