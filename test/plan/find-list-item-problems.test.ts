import {
  describeListItemProblem,
  findListItemProblems,
  schemaNameOf,
} from '../../src/plan/find-list-item-problems.js';

// A group-version document shaped as the API server publishes OpenAPI v3 (refs into
// components.schemas, one-item allOf wrappers, maps as additionalProperties, preserve-unknown-fields).
const document = {
  components: {
    schemas: {
      'example.v1.Widget': {
        type: 'object',
        'x-kubernetes-group-version-kind': [{ group: 'example.io', version: 'v1', kind: 'Widget' }],
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { allOf: [{ $ref: '#/components/schemas/example.v1.Meta' }], default: {} },
          spec: { $ref: '#/components/schemas/example.v1.WidgetSpec' },
        },
      },
      'example.v1.Meta': {
        type: 'object',
        properties: {
          name: { type: 'string' },
          creationTimestamp: { type: 'string' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
      'example.v1.WidgetSpec': {
        type: 'object',
        properties: {
          parts: { type: 'array', items: { $ref: '#/components/schemas/example.v1.Part' } },
          tags: { type: 'array', items: { type: 'string' } },
          raw: { type: 'object' },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
      'example.v1.Part': { type: 'object', properties: { name: { type: 'string' } } },
    },
  },
};

const problemsOf = (value: Record<string, unknown>) =>
  findListItemProblems(document, 'example.v1.Widget', value as never, 'Widget').map(describeListItemProblem);

describe('findListItemProblems: what kubectl refuses in a List item before sending', () => {
  it('finds the schema of a kind by its group-version-kind', () => {
    expect(schemaNameOf(document, { group: 'example.io', version: 'v1', kind: 'Widget' })).toBe(
      'example.v1.Widget',
    );
    expect(schemaNameOf(document, { group: 'example.io', version: 'v2', kind: 'Widget' })).toBeUndefined();
  });

  it('accepts known fields, map keys, fields of objects without properties and of preserved objects', () => {
    expect(
      problemsOf({
        apiVersion: 'example.io/v1',
        kind: 'Widget',
        metadata: { name: 'w', creationTimestamp: null, labels: { any: 'x' } },
        spec: { parts: [{ name: 'a' }], tags: ['t'], raw: { any: 1 }, free: { deep: { any: [null] } } },
      }),
    ).toEqual([]);
  });

  it('names each unknown field at its place, through refs, allOf and list items', () => {
    expect(
      problemsOf({ bogus: 1, metadata: { nam: 'w' }, spec: { parts: [{ name: 'a' }, { nme: 'b' }] } }),
    ).toEqual([
      'ValidationError(Widget): unknown field "bogus" in example.v1.Widget',
      'ValidationError(Widget.metadata): unknown field "nam" in example.v1.Meta',
      'ValidationError(Widget.spec.parts[1]): unknown field "nme" in example.v1.Part',
    ]);
  });

  it('refuses a null as a map value or a list item, not as a field of an object', () => {
    expect(
      problemsOf({ metadata: { labels: { a: null }, name: null }, spec: { tags: ['t', null] } }),
    ).toEqual([
      'ValidationError(Widget.metadata.labels): unknown object type "nil" in Widget.metadata.labels.a',
      'ValidationError(Widget.spec.tags): unknown object type "nil" in Widget.spec.tags[1]',
    ]);
  });
});
