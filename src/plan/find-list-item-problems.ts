import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { classifySchema, schemasOf, type SchemaShape } from './list-item-schema.js';

/**
 * What kubectl's client-side validation refuses in an object under its kind's OpenAPI schema, in its
 * words: `ValidationError(Deployment.spec): unknown field "replica" in io.k8s.api.apps.v1.DeploymentSpec`,
 * `ValidationError(LimitRange.spec): missing required field "limits" in io.k8s.api.core.v1.LimitRangeSpec`,
 * `ValidationError(Deployment.spec.replicas): invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas:
 * got "string", expected "integer"`.
 *
 * kubectl validates on the client only what the server cannot: the items of a `kind: List` (a List is
 * no API resource, so the server is never asked to validate it), and with `--validate=strict` it refuses
 * the whole file for one problem. Everything else is sent with `fieldValidation=Strict` and the server
 * refuses it itself. The rules are kubectl's validator's (kube-openapi's proto validation), checked
 * against kubectl 1.33:
 *
 * - keys are visited in sorted order; in an object with properties, a null field is skipped, an
 *   unknown field is named, and a required field that is absent or null is named after the others;
 * - in a map, a null value is refused (`unknown object type "nil" in ConfigMap.data.b`, with no
 *   `ValidationError(...)` before it); in a list, a null item is refused;
 * - a string field takes any scalar, an integer or a number field an integer or a float, a boolean
 *   field a boolean only; an object, map or list field takes only its own shape;
 * - the schema is named by the definition a `$ref` leads to, then field by field; list items and map
 *   values keep the name of their list or map (`io.k8s.api.core.v1.Container.args`).
 */
export interface ListItemProblem {
  /** `ConfigMap`, `Deployment.spec.template.spec.containers[0]`: where, as kubectl spells it; absent
   * for the problems kubectl prints bare (a null map value). */
  readonly at?: string;
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

/**
 * What kubectl's validator refuses in `value` under the schema `rootName`, at most `limit` problems;
 * `root` names the value's place in the messages (its kind, or `LimitRangeList.items[0]`).
 */
export function findListItemProblems(
  document: JsonValue,
  rootName: string,
  value: JsonObject,
  root: string,
  limit = 20,
): ListItemProblem[] {
  const schemas = schemasOf(document);
  const found: ListItemProblem[] = [];
  const walk = (node: JsonValue, schemaRef: JsonValue | undefined, at: string, schemaPath: string): void => {
    if (found.length >= limit) return;
    const shape = classifySchema(schemas, schemaRef, schemaPath);
    if (shape.type === 'arbitrary') return;
    const typeError = (actual: string) =>
      found.push({ at, problem: invalidType(shape.path, actual, expectedOf(shape)) });
    if (Array.isArray(node)) {
      if (shape.type !== 'array') return void typeError('array');
      node.forEach((item, index) => {
        if (item === null) found.push({ at, problem: `unknown object type "nil" in ${at}[${index}]` });
        else walk(item, shape.items, `${at}[${index}]`, shape.path);
      });
      return;
    }
    if (isJsonObject(node)) {
      if (shape.type === 'kind') {
        for (const key of Object.keys(node).sort()) {
          const item = node[key] ?? null;
          if (item === null) continue;
          if (!Object.hasOwn(shape.properties, key)) {
            found.push({ at, problem: `unknown field ${JSON.stringify(key)} in ${shape.path}` });
          } else walk(item, shape.properties[key], `${at}.${key}`, `${shape.path}.${key}`);
        }
        for (const required of shape.required) {
          if ((node[required] ?? null) !== null) continue;
          found.push({ at, problem: `missing required field ${JSON.stringify(required)} in ${shape.path}` });
        }
        return;
      }
      if (shape.type !== 'map') return void typeError('map');
      for (const key of Object.keys(node).sort()) {
        const item = node[key] ?? null;
        if (item === null) found.push({ problem: `unknown object type "nil" in ${at}.${key}` });
        else walk(item, shape.values, `${at}.${key}`, shape.path);
      }
      return;
    }
    if (node === null) return;
    const actual = scalarKind(node);
    if (shape.type !== 'primitive' || !accepts(shape.primitive, actual)) typeError(actual);
  };
  walk(value, { $ref: `#/components/schemas/${rootName}` }, root, rootName);
  return found;
}

/** kubectl's words for one problem. */
export function describeListItemProblem({ at, problem }: ListItemProblem): string {
  return at === undefined ? problem : `ValidationError(${at}): ${problem}`;
}

function invalidType(path: string, actual: string, expected: string): string {
  return `invalid type for ${path}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;
}

function expectedOf(shape: SchemaShape): string {
  if (shape.type === 'primitive') return shape.primitive;
  return shape.type === 'array' ? 'array' : 'map';
}

/** A scalar's kind as kubectl's validator sees it after reading the JSON (whole numbers are integers). */
function scalarKind(value: JsonValue): string {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return 'integer';
  return 'number';
}

function accepts(expected: string, actual: string): boolean {
  if (expected === 'string') return true;
  if (expected === 'integer' || expected === 'number') return actual === 'integer' || actual === 'number';
  return expected === actual;
}
