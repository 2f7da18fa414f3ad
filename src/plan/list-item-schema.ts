import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';

/**
 * A schema of an OpenAPI v3 document as kubectl's validator sees it (kube-openapi's proto models):
 * an object with properties is a kind, an object without is a map (of its `additionalProperties`, or
 * of anything), an array has items, a string, integer, number or boolean is a primitive, and
 * anything else (no type, `x-kubernetes-preserve-unknown-fields`) takes any value. `path` is the
 * name kubectl gives the schema in its messages.
 */
export type SchemaShape =
  | { readonly type: 'arbitrary' }
  | {
      readonly type: 'kind';
      readonly path: string;
      readonly properties: JsonObject;
      readonly required: readonly string[];
    }
  | { readonly type: 'map'; readonly path: string; readonly values: JsonValue | undefined }
  | { readonly type: 'array'; readonly path: string; readonly items: JsonValue | undefined }
  | { readonly type: 'primitive'; readonly path: string; readonly primitive: string };

const PRIMITIVES = new Set(['string', 'integer', 'number', 'boolean']);

/** The `components.schemas` of a group-version document. */
export function schemasOf(document: JsonValue): JsonObject {
  const components = isJsonObject(document) ? document.components : undefined;
  const schemas = isJsonObject(components) ? components.schemas : undefined;
  return isJsonObject(schemas) ? schemas : {};
}

/** The shape of the schema `start` (its `$ref`s followed), named `path` unless a `$ref` names it. */
export function classifySchema(schemas: JsonObject, start: JsonValue | undefined, path: string): SchemaShape {
  const { schema, name } = resolve(schemas, start);
  // The API server publishes a nullable field of a CRD to kubectl (OpenAPI v2) without a type, and not
  // as required, so kubectl takes anything there; v3 keeps the type, so it is dropped here.
  if (schema === undefined || schema['x-kubernetes-preserve-unknown-fields'] === true || isNullable(schema)) {
    return { type: 'arbitrary' };
  }
  const named = name ?? path;
  const type = typeof schema.type === 'string' ? schema.type : undefined;
  const properties = isJsonObject(schema.properties) ? schema.properties : undefined;
  if (properties !== undefined && (type === undefined || type === 'object')) {
    const required = Array.isArray(schema.required)
      ? schema.required.filter(
          (field): field is string =>
            typeof field === 'string' && !isNullable(resolve(schemas, properties[field]).schema),
        )
      : [];
    return { type: 'kind', path: named, properties, required };
  }
  if (type === 'object') {
    // Without `additionalProperties` (RawExtension, `type: object` alone) its values may be anything.
    const values = isJsonObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
    return { type: 'map', path: named, values };
  }
  // An array without an item schema reaches kubectl untyped: anything goes.
  if (type === 'array') {
    return schema.items === undefined
      ? { type: 'arbitrary' }
      : { type: 'array', path: named, items: schema.items };
  }
  if (type !== undefined && PRIMITIVES.has(type)) {
    // IntOrString is published as a string (format int-or-string), so it takes any scalar too.
    return { type: 'primitive', path: named, primitive: type };
  }
  return { type: 'arbitrary' };
}

function isNullable(schema: JsonObject | undefined): boolean {
  return schema?.nullable === true;
}

/** A schema with its `$ref`s followed (through a one-item `allOf` too), and the name it was found under. */
function resolve(
  schemas: JsonObject,
  start: JsonValue | undefined,
): { schema: JsonObject | undefined; name: string | undefined } {
  let schema = isJsonObject(start) ? start : undefined;
  let name: string | undefined;
  for (let hops = 0; schema !== undefined && hops < 8; hops += 1) {
    const ref = typeof schema.$ref === 'string' ? schema.$ref : undefined;
    const allOf = Array.isArray(schema.allOf) && schema.allOf.length === 1 ? schema.allOf[0] : undefined;
    if (ref !== undefined) {
      name = ref.replace('#/components/schemas/', '');
      const target = schemas[name];
      schema = isJsonObject(target) ? target : undefined;
    } else if (isJsonObject(allOf) && schema.properties === undefined) {
      schema = allOf;
    } else {
      break;
    }
  }
  return { schema, name };
}
