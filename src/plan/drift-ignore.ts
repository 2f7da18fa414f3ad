import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import type { ObjectRef } from '../manifests/object-ref.js';

/**
 * `spec.driftIgnore`: fields of some objects whose live-side drift is neither corrected nor reported
 * (`/spec/replicas` under a HorizontalPodAutoscaler), as kustomize-controller's drift ignore rules.
 * A change of such a field in Git is still applied: only what others change on the live object is
 * left alone.
 */
export interface DriftIgnoreRule {
  /** RFC 6901 JSON pointers, e.g. `/spec/replicas`; list elements by position (`/spec/ports/0`). */
  readonly paths: readonly string[];
  /** Which objects the rule is for; an absent key matches any value, an empty target every object. */
  readonly target: {
    readonly group?: string;
    readonly kind?: string;
    readonly name?: string;
    readonly namespace?: string;
  };
}

/** A JSON pointer split into its reference tokens, unescaped; undefined when it is not one. */
export function parseJsonPointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  // `~` must be followed by 0 or 1 (RFC 6901 section 3).
  if (/~(?![01])/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The pointers (as tokens) of every rule whose target matches the object. */
export function ignoredPathsFor(rules: readonly DriftIgnoreRule[], ref: ObjectRef): string[][] {
  const paths: string[][] = [];
  for (const rule of rules) {
    if (!targets(rule.target, ref)) continue;
    for (const pointer of rule.paths) {
      const tokens = parseJsonPointer(pointer);
      // The whole object cannot be ignored: that is what `applyset.dev/prune` and leaving Git are for.
      if (tokens !== undefined && tokens.length > 0) paths.push(tokens);
    }
  }
  return paths;
}

function targets(target: DriftIgnoreRule['target'], ref: ObjectRef): boolean {
  return (
    (target.group === undefined || target.group === ref.group) &&
    (target.kind === undefined || target.kind === ref.kind) &&
    (target.name === undefined || target.name === ref.name) &&
    (target.namespace === undefined || target.namespace === ref.namespace)
  );
}

/**
 * The live object as the three-way merge should see it: each ignored field holds what was last
 * applied (`original`), or is absent when nothing was. The patch then leaves a field others changed
 * alone (live = original in its eyes), but still carries a change the file makes (modified differs
 * from original). The patch is sent against the real object, so the other writer's value stays.
 */
export function maskIgnoredFields(
  live: JsonObject,
  original: JsonObject | undefined,
  paths: readonly (readonly string[])[],
): JsonObject {
  let masked = live;
  for (const path of paths) {
    const applied = original === undefined ? undefined : valueAt(original, path);
    masked = withValueAt(masked, path, applied);
  }
  return masked;
}

function valueAt(value: JsonValue, path: readonly string[]): JsonValue | undefined {
  let node: JsonValue | undefined = value;
  for (const token of path) {
    if (isJsonObject(node)) node = Object.hasOwn(node, token) ? node[token] : undefined;
    else if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(token)) node = node[Number(token)];
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/**
 * A copy of `root` with the value at `path` replaced (or removed, for undefined). A path through
 * something that is not there changes nothing: the live object has no such field to protect.
 */
function withValueAt<T extends JsonValue>(root: T, path: readonly string[], value: JsonValue | undefined): T {
  const [token, ...rest] = path;
  if (token === undefined) return root;
  if (isJsonObject(root)) {
    const object: JsonObject = root;
    if (rest.length === 0) {
      const copy: JsonObject = { ...object };
      if (value === undefined) delete copy[token];
      else copy[token] = value;
      return copy as T;
    }
    const child = Object.hasOwn(object, token) ? object[token] : undefined;
    if (child === undefined) return root;
    return { ...object, [token]: withValueAt(child, rest, value) } as T;
  }
  if (Array.isArray(root) && /^(0|[1-9][0-9]*)$/.test(token)) {
    const index = Number(token);
    const child = root[index];
    if (child === undefined) return root;
    // An element cannot be removed by position without shifting the others: keep it as it is.
    if (rest.length === 0 && value === undefined) return root;
    const copy: JsonValue[] = [...(root as JsonValue[])];
    copy[index] = rest.length === 0 ? (value as JsonValue) : withValueAt(child, rest, value);
    return copy as T;
  }
  return root;
}
