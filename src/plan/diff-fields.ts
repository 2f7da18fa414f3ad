import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/** One changed leaf (or subtree added, removed, or changed in type). `undefined` means absent. */
export interface FieldChange {
  readonly path: string;
  readonly before: JsonValue | undefined;
  readonly after: JsonValue | undefined;
}

/**
 * Keys that identify the elements of a list, tried in order, as Kubernetes merge keys do: `name` for
 * containers, volumes, env, ports...; the others for lists whose elements have no name.
 */
const IDENTITY_KEYS = ['name', 'mountPath', 'devicePath', 'containerPort', 'port', 'ip', 'type'] as const;

/**
 * The field-level differences between two JSON objects, for `--dry-run` and `applyset diff`: sorted
 * by path, one entry per changed scalar, per added or removed field, and per value that changed type.
 * List elements are matched by an identity key when every element of both lists has a distinct one
 * (`containers[name=web].image`), by position otherwise (`args[0]`).
 */
export function diffFields(before: JsonObject, after: JsonObject): FieldChange[] {
  const changes: FieldChange[] = [];
  diffValue('', before, after, changes);
  return changes;
}

function diffValue(
  path: string,
  before: JsonValue | undefined,
  after: JsonValue | undefined,
  changes: FieldChange[],
): void {
  if (before === undefined && after === undefined) return;
  if (isJsonObject(before) && isJsonObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) diffValue(joinKey(path, key), before[key], after[key], changes);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    diffList(path, before, after, changes);
    return;
  }
  if (!sameJson(before, after)) changes.push({ path, before, after });
}

function diffList(path: string, before: JsonValue[], after: JsonValue[], changes: FieldChange[]): void {
  const key = identityKey(before, after);
  if (key === undefined) {
    const length = Math.max(before.length, after.length);
    for (let index = 0; index < length; index += 1)
      diffValue(`${path}[${index}]`, before[index], after[index], changes);
    return;
  }
  const idOf = (element: JsonValue) => String((element as JsonObject)[key]);
  const beforeById = new Map(before.map((element) => [idOf(element), element]));
  const afterById = new Map(after.map((element) => [idOf(element), element]));
  // Elements in the order of `after`, then removed ones in the order of `before`: the order a reader of
  // the new manifest expects.
  const ids = [...new Set([...afterById.keys(), ...beforeById.keys()])];
  for (const id of ids) diffValue(`${path}[${key}=${id}]`, beforeById.get(id), afterById.get(id), changes);
}

/** The first identity key that every element of both lists has, as a distinct scalar. */
function identityKey(before: readonly JsonValue[], after: readonly JsonValue[]): string | undefined {
  if (before.length === 0 && after.length === 0) return undefined;
  return IDENTITY_KEYS.find((key) => [before, after].every((list) => distinctScalars(list, key)));
}

function distinctScalars(list: readonly JsonValue[], key: string): boolean {
  const seen = new Set<string>();
  for (const element of list) {
    if (!isJsonObject(element)) return false;
    const value = element[key];
    if (typeof value !== 'string' && typeof value !== 'number') return false;
    if (seen.has(String(value))) return false;
    seen.add(String(value));
  }
  return true;
}

function joinKey(path: string, key: string): string {
  // Annotation and label keys hold dots and slashes: quote them so the path stays readable and
  // unambiguous.
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${stringifyJson(key)}]`;
}

function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((element, index) => sameJson(element, b[index]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && sameJson(a[key], b[key]));
  }
  return false;
}

/** `path: before → after`, with `(absent)` for a missing side; values as compact JSON. */
export function formatFieldChange(change: FieldChange): string {
  const show = (value: JsonValue | undefined) => (value === undefined ? '(absent)' : stringifyJson(value));
  return `${change.path}: ${show(change.before)} → ${show(change.after)}`;
}

/**
 * A change of a Secret's `data` or `stringData` as kubectl diff shows it, `*** (before)` and
 * `*** (after)`: a diff is printed, pasted into pull requests and logged by CI, so it says that a value
 * changed and never what it was or becomes. Other fields are returned as they are.
 */
export function maskSecretValue(change: FieldChange): FieldChange {
  if (!/^(data|stringData)([.[]|$)/.test(change.path)) return change;
  return { path: change.path, before: masked(change.before, 'before'), after: masked(change.after, 'after') };
}

/** A value masked; a whole map added or removed keeps its keys, which say what is stored. */
function masked(value: JsonValue | undefined, side: 'before' | 'after'): JsonValue | undefined {
  if (value === undefined) return undefined;
  if (!isJsonObject(value)) return `*** (${side})`;
  return Object.fromEntries(Object.keys(value).map((key) => [key, `*** (${side})`]));
}
