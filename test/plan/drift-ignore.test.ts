import type { JsonObject } from '../../src/manifests/json-value.js';
import {
  ignoredPathsFor,
  maskIgnoredFields,
  parseJsonPointer,
  type DriftIgnoreRule,
} from '../../src/plan/drift-ignore.js';

const deployment = { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' };

describe('parseJsonPointer', () => {
  it.each<[string, string[] | undefined]>([
    ['/spec/replicas', ['spec', 'replicas']],
    ['/metadata/annotations/example.com~1team', ['metadata', 'annotations', 'example.com/team']],
    ['/a~0b', ['a~b']],
    ['/spec/ports/0', ['spec', 'ports', '0']],
    ['', []],
    ['spec/replicas', undefined],
    ['/a~2', undefined],
  ])('%j → %j', (pointer, tokens) => {
    expect(parseJsonPointer(pointer)).toEqual(tokens);
  });
});

describe('ignoredPathsFor', () => {
  const rules: DriftIgnoreRule[] = [
    { paths: ['/spec/replicas'], target: { group: 'apps', kind: 'Deployment' } },
    { paths: ['/metadata/labels/team'], target: {} },
    { paths: ['/data/x'], target: { kind: 'ConfigMap' } },
    { paths: ['/spec/paused'], target: { name: 'other' } },
  ];

  it('takes the paths of every rule whose target matches, an absent key matching anything', () => {
    expect(ignoredPathsFor(rules, deployment)).toEqual([
      ['spec', 'replicas'],
      ['metadata', 'labels', 'team'],
    ]);
  });

  it('never ignores the whole object', () => {
    expect(ignoredPathsFor([{ paths: [''], target: {} }], deployment)).toEqual([]);
  });
});

describe('maskIgnoredFields', () => {
  const live: JsonObject = {
    spec: { replicas: 7, template: { spec: { containers: [{ name: 'web', image: 'b' }] } } },
    metadata: { labels: { team: 'theirs', app: 'web' } },
  };

  it('shows the merge the last-applied value where others changed an ignored field', () => {
    const masked = maskIgnoredFields(live, { spec: { replicas: 2 } }, [['spec', 'replicas']]);
    expect(masked['spec']).toEqual({
      replicas: 2,
      template: live['spec'] && (live['spec'] as JsonObject)['template'],
    });
  });

  it('removes the field when nothing was applied there, and leaves the input alone', () => {
    const copy = structuredClone(live);
    const masked = maskIgnoredFields(live, { spec: {} }, [['metadata', 'labels', 'team']]);
    expect(masked['metadata']).toEqual({ labels: { app: 'web' } });
    expect(live).toEqual(copy);
  });

  it('follows list elements by position and ignores paths that lead nowhere', () => {
    const original = { spec: { template: { spec: { containers: [{ name: 'web', image: 'a' }] } } } };
    const masked = maskIgnoredFields(live, original, [
      ['spec', 'template', 'spec', 'containers', '0', 'image'],
      ['spec', 'missing', 'deeper'],
      ['spec', 'replicas', 'not-an-object'],
    ]);
    expect(masked).toEqual({
      spec: { replicas: 7, template: { spec: { containers: [{ name: 'web', image: 'a' }] } } },
      metadata: live['metadata'],
    });
  });
});
