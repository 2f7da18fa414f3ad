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
      'example.v1.Part': {
        type: 'object',
        required: ['name', 'size', 'note'],
        properties: {
          name: { type: 'string' },
          size: { type: 'integer' },
          ratio: { type: 'number' },
          enabled: { type: 'boolean' },
          port: { allOf: [{ $ref: '#/components/schemas/example.v1.IntOrString' }] },
          args: { type: 'array', items: { type: 'string' } },
          note: { type: 'string', nullable: true },
          loose: { type: 'array' },
        },
      },
      'example.v1.IntOrString': { type: 'string', format: 'int-or-string' },
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
        spec: {
          parts: [{ name: 'a', size: 1 }],
          tags: ['t'],
          raw: { any: 1 },
          free: { deep: { any: [null] } },
        },
      }),
    ).toEqual([]);
  });

  it('names each unknown field at its place, through refs, allOf and list items', () => {
    expect(
      problemsOf({
        bogus: 1,
        metadata: { nam: 'w' },
        spec: {
          parts: [
            { name: 'a', size: 1 },
            { name: 'b', nme: 'b', size: 2 },
          ],
        },
      }),
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
      // kubectl prints a null map value bare, with no ValidationError(...) before it.
      'unknown object type "nil" in Widget.metadata.labels.a',
      'ValidationError(Widget.spec.tags): unknown object type "nil" in Widget.spec.tags[1]',
    ]);
  });

  it('names a required field that is absent or null, after the fields of its object', () => {
    expect(
      problemsOf({
        spec: {
          parts: [
            { size: 1, bogus: 1 },
            { name: 'b', size: null },
          ],
        },
      }),
    ).toEqual([
      'ValidationError(Widget.spec.parts[0]): unknown field "bogus" in example.v1.Part',
      'ValidationError(Widget.spec.parts[0]): missing required field "name" in example.v1.Part',
      'ValidationError(Widget.spec.parts[1]): missing required field "size" in example.v1.Part',
    ]);
  });

  it('takes anything in a nullable field, and does not require it, as kubectl sees CRDs', () => {
    expect(
      problemsOf({
        spec: {
          parts: [
            { name: 'a', size: 1, note: { any: [1] }, loose: { a: null } },
            { name: 'b', size: 2 },
          ],
        },
      }),
    ).toEqual([]);
  });

  it('refuses the types kubectl refuses, naming the schema by field, and takes the rest', () => {
    const part = (extra: Record<string, unknown>) => ({
      spec: { parts: [{ name: 'a', size: 1, ...extra }] },
    });
    expect(problemsOf(part({ size: 1.5, ratio: 2, name: 7, port: true, args: [1, false] }))).toEqual([]);
    expect(
      problemsOf(part({ size: '3', ratio: false, enabled: 'yes', args: [{ a: 1 }, ['x']], name: ['x'] })),
    ).toEqual([
      'ValidationError(Widget.spec.parts[0].args[0]): invalid type for example.v1.Part.args: got "map", expected "string"',
      'ValidationError(Widget.spec.parts[0].args[1]): invalid type for example.v1.Part.args: got "array", expected "string"',
      'ValidationError(Widget.spec.parts[0].enabled): invalid type for example.v1.Part.enabled: got "string", expected "boolean"',
      'ValidationError(Widget.spec.parts[0].name): invalid type for example.v1.Part.name: got "array", expected "string"',
      'ValidationError(Widget.spec.parts[0].ratio): invalid type for example.v1.Part.ratio: got "boolean", expected "number"',
      'ValidationError(Widget.spec.parts[0].size): invalid type for example.v1.Part.size: got "string", expected "integer"',
    ]);
    expect(problemsOf({ metadata: [], spec: { parts: { a: 1 }, tags: 't' } })).toEqual([
      'ValidationError(Widget.metadata): invalid type for example.v1.Meta: got "array", expected "map"',
      'ValidationError(Widget.spec.parts): invalid type for example.v1.WidgetSpec.parts: got "map", expected "array"',
      'ValidationError(Widget.spec.tags): invalid type for example.v1.WidgetSpec.tags: got "string", expected "array"',
    ]);
  });
});
