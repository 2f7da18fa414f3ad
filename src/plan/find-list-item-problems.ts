import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';

/**
 * The fields of an object that its kind's OpenAPI v3 schema does not have, in the words kubectl's
 * client-side validation uses: `ValidationError(Deployment.spec): unknown field "replica" in
 * io.k8s.api.apps.v1.DeploymentSpec`.
 *
 * kubectl validates on the client only what the server cannot: the items of a `kind: List` (a List is
 * no API resource, so the server is never asked to validate it), and with `--validate=strict` it refuses
 * the whole file for one unknown field. Everything else is sent with `fieldValidation=Strict` and the
 * server refuses it itself. This looks for what kubectl's validator refuses before any type check:
 * unknown fields, and a null where a map value or a list item belongs (a null field of an object is
 * fine: `creationTimestamp: null`). Types and required fields are left to the server.
 *
 * Schema rules, as the API server publishes them: `$ref` into `components.schemas` (also wrapped in a
 * one-item `allOf`), `properties`, `additionalProperties` (a map), `items`, and
 * `x-kubernetes-preserve-unknown-fields` (anything goes below). An object schema without properties
 * (RawExtension, an embedded resource) takes any field.
 */
export interface ListItemProblem {
  /** `ConfigMap`, `Deployment.spec.template.spec.containers[0]`: where, as kubectl spells it. */
  readonly at: string;
  /** `unknown field "bogus" in io.k8s.api.core.v1.ConfigMap`, `unknown object type "nil" in ConfigMap.data.b`. */
  readonly problem: string;
}

/** The schema of `gvk` in a group-version document: its `components.schemas` name. */
export function schemaNameOf(
  document: JsonValue,
  gvk: { group: string; version: string; kind: string },
): string | undefined {
  const schemas = schemasOf(document);
  return Object.keys(schemas).find((name) => {
    const named = schemas[name];
    const kinds = isJsonObject(named) ? named['x-kubernetes-group-version-kind'] : undefined;
    return (
      Array.isArray(kinds) &&
      kinds.some(
        (k) => isJsonObject(k) && k.group === gvk.group && k.version === gvk.version && k.kind === gvk.kind,
      )
    );
  });
}

/** What kubectl's validator refuses in `value` under the schema `rootName`, at most `limit` problems. */
export function findListItemProblems(
  document: JsonValue,
  rootName: string,
  value: JsonObject,
  kind: string,
  limit = 20,
): ListItemProblem[] {
  const schemas = schemasOf(document);
  const found: ListItemProblem[] = [];
  const walk = (node: JsonValue, schemaRef: JsonValue | undefined, at: string): void => {
    if (found.length >= limit) return;
    const { schema, name } = resolve(schemas, schemaRef);
    if (schema === undefined || schema['x-kubernetes-preserve-unknown-fields'] === true) return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        if (item === null) found.push({ at, problem: `unknown object type "nil" in ${at}[${index}]` });
        else walk(item, schema.items, `${at}[${index}]`);
      });
      return;
    }
    if (!isJsonObject(node)) return;
    const properties = isJsonObject(schema.properties) ? schema.properties : undefined;
    const additional = schema.additionalProperties;
    for (const [key, item] of Object.entries(node)) {
      if (properties !== undefined && Object.hasOwn(properties, key)) {
        if (item !== null) walk(item, properties[key], `${at}.${key}`);
      } else if (isJsonObject(additional)) {
        if (item === null) found.push({ at, problem: `unknown object type "nil" in ${at}.${key}` });
        else walk(item, additional, `${at}.${key}`);
      } else if (properties !== undefined && additional !== true) {
        found.push({ at, problem: `unknown field ${JSON.stringify(key)} in ${name ?? 'object'}` });
      }
    }
  };
  walk(value, { $ref: `#/components/schemas/${rootName}` }, kind);
  return found;
}

/** kubectl's words for one problem. */
export function describeListItemProblem({ at, problem }: ListItemProblem): string {
  return `ValidationError(${at}): ${problem}`;
}

function schemasOf(document: JsonValue): JsonObject {
  const components = isJsonObject(document) ? document.components : undefined;
  const schemas = isJsonObject(components) ? components.schemas : undefined;
  return isJsonObject(schemas) ? schemas : {};
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
