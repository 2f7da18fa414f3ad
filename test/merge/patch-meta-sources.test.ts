import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { builtinPatchMeta } from '../../src/merge/builtin-patch-meta.js';
import { createThreeWayMergePatch } from '../../src/merge/create-three-way-merge-patch.js';
import { encodeGoJson } from '../../src/merge/encode-go-json.js';
import { buildPatchMetaTable, readOpenApiPatchInfo } from '../../src/merge/openapi-patch-meta.js';
import type { JsonObject, JsonValue } from '../../src/manifests/json-value.js';

const openApi = JSON.parse(
  readFileSync(new URL('../fixtures/merge/openapi-v3-mini.json', import.meta.url), 'utf8'),
) as JsonValue;
const deploymentGvk = { group: 'apps', version: 'v1', kind: 'Deployment' };

describe('patch metadata from OpenAPI v3', () => {
  it('reads strategies and merge keys through allOf/$ref', () => {
    const { strategicMerge, meta } = readOpenApiPatchInfo(openApi, deploymentGvk);
    expect(strategicMerge).toBe(true);
    if (meta === undefined) throw new Error('no meta');
    const spec = meta.lookupObjectField('spec');
    expect(spec.meta.lookupObjectField('strategy').strategies).toEqual(['retainKeys']);
    const containers = spec.meta
      .lookupObjectField('template')
      .meta.lookupObjectField('spec')
      .meta.lookupListField('containers');
    expect(containers).toMatchObject({ strategies: ['merge'], mergeKey: 'name' });
    expect(containers.meta.lookupListField('ports')).toMatchObject({
      strategies: ['merge'],
      mergeKey: 'containerPort',
    });
    expect(containers.meta.lookupListField('args').strategies).toEqual([]);
    expect(() => spec.meta.lookupObjectField('nope')).toThrow(/unable to find api field/);
  });

  it('treats maps as value types without strategies', () => {
    const meta = readOpenApiPatchInfo(openApi, deploymentGvk).meta as NonNullable<
      ReturnType<typeof readOpenApiPatchInfo>['meta']
    >;
    const labels = meta.lookupObjectField('metadata').meta.lookupObjectField('labels');
    expect(labels.meta.lookupObjectField('app').strategies).toEqual([]);
  });

  it('says no strategic merge for kinds whose PATCH does not accept it', () => {
    expect(
      readOpenApiPatchInfo(openApi, { group: 'example.com', version: 'v1', kind: 'Widget' }).strategicMerge,
    ).toBe(false);
  });

  it('flattens into the same table the built-in lookup uses', () => {
    const table = buildPatchMetaTable([openApi]);
    expect(table['apps/v1/Deployment']).toMatchObject({
      'spec.strategy': { strategy: 'retainKeys' },
      'spec.template.spec.containers': { strategy: 'merge', mergeKey: 'name' },
      'spec.template.spec.containers.ports': { strategy: 'merge', mergeKey: 'containerPort' },
    });
  });
});

describe('the built-in patch metadata table', () => {
  const vectors = readFileSync(
    new URL('../fixtures/merge/kubernetes-strategic-merge.yaml', import.meta.url),
    'utf8',
  )
    .split(/^---$/m)
    .map((raw) => ({
      doc: yaml.load(raw, { schema: yaml.JSON_SCHEMA }) as JsonObject,
      patchText: /^patch: (.*)$/m.exec(raw)?.[1],
    }));
  const gvks: Record<string, { group: string; version: string; kind: string }> = {
    Deployment: deploymentGvk,
    Service: { group: '', version: 'v1', kind: 'Service' },
    ConfigMap: { group: '', version: 'v1', kind: 'ConfigMap' },
    StatefulSet: { group: 'apps', version: 'v1', kind: 'StatefulSet' },
    PDB: { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget' },
  };
  // Vectors rooted at whole objects run unchanged against the generated table.
  const rooted = vectors.filter(({ doc }) => gvks[doc.schema as string] !== undefined);
  it.each(rooted.map((vector) => [vector.doc.id as string, vector] as const))(
    'reproduces %s',
    (_id, { doc, patchText }) => {
      const meta = builtinPatchMeta(gvks[doc.schema as string]!);
      if (meta === undefined) throw new Error('kind missing from the table');
      const patch = createThreeWayMergePatch(
        {
          original: (doc.original ?? null) as JsonValue,
          modified: doc.modified as JsonValue,
          current: doc.current as JsonValue,
        },
        meta,
      );
      expect(encodeGoJson(patch)).toBe(patchText);
    },
  );

  it('has no entry for custom resources', () => {
    expect(builtinPatchMeta({ group: 'example.com', version: 'v1', kind: 'Widget' })).toBeUndefined();
  });
});
