import type { JsonObject } from '../../src/manifests/json-value.js';
import { diffFields, formatFieldChange, type FieldChange } from '../../src/plan/diff-fields.js';

const deployment = (image: string, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 2,
    template: {
      spec: {
        containers: [
          { name: 'web', image, ports: [{ containerPort: 80 }] },
          { name: 'sidecar', image: 'envoy:1', args: ['--a', '--b'] },
        ],
      },
    },
    ...extra,
  },
});

describe('diffFields', () => {
  const cases: [string, JsonObject, JsonObject, FieldChange[]][] = [
    ['identical objects', deployment('nginx:1'), deployment('nginx:1'), []],
    [
      'a container image, matched by name',
      deployment('nginx:1'),
      deployment('nginx:2'),
      [{ path: 'spec.template.spec.containers[name=web].image', before: 'nginx:1', after: 'nginx:2' }],
    ],
    [
      'an added and a removed field',
      { spec: { replicas: 1 } },
      { spec: { paused: true } },
      [
        { path: 'spec.paused', before: undefined, after: true },
        { path: 'spec.replicas', before: 1, after: undefined },
      ],
    ],
    [
      'a label key with dots and slashes',
      { metadata: { labels: {} } },
      { metadata: { labels: { 'app.kubernetes.io/name': 'web' } } },
      [{ path: 'metadata.labels["app.kubernetes.io/name"]', before: undefined, after: 'web' }],
    ],
    [
      'list elements without identity, by position',
      { args: ['--a', '--b'] },
      { args: ['--a', '--c', '--d'] },
      [
        { path: 'args[1]', before: '--b', after: '--c' },
        { path: 'args[2]', before: undefined, after: '--d' },
      ],
    ],
    [
      'a reordered named list is no change',
      {
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
      {
        env: [
          { name: 'B', value: '2' },
          { name: 'A', value: '1' },
        ],
      },
      [],
    ],
    [
      'added and removed list elements, by merge key',
      { ports: [{ containerPort: 80 }, { containerPort: 443 }] },
      { ports: [{ containerPort: 8080 }, { containerPort: 80 }] },
      [
        { path: 'ports[containerPort=8080]', before: undefined, after: { containerPort: 8080 } },
        { path: 'ports[containerPort=443]', before: { containerPort: 443 }, after: undefined },
      ],
    ],
    [
      'duplicate names fall back to position',
      {
        l: [
          { name: 'a', v: 1 },
          { name: 'a', v: 2 },
        ],
      },
      {
        l: [
          { name: 'a', v: 1 },
          { name: 'a', v: 3 },
        ],
      },
      [{ path: 'l[1].v', before: 2, after: 3 }],
    ],
    [
      'a change of type',
      { data: { x: '1' } },
      { data: { x: { nested: true } } },
      [{ path: 'data.x', before: '1', after: { nested: true } }],
    ],
    ['null and absent differ', { a: null }, {}, [{ path: 'a', before: null, after: undefined }]],
  ];

  it.each(cases)('reports %s', (_name, before, after, expected) => {
    expect(diffFields(before, after)).toEqual(expected);
  });

  it('formats a change on one line', () => {
    expect(formatFieldChange({ path: 'spec.replicas', before: 2, after: 3 })).toBe('spec.replicas: 2 → 3');
    expect(formatFieldChange({ path: 'spec.paused', before: undefined, after: true })).toBe(
      'spec.paused: (absent) → true',
    );
  });
});
