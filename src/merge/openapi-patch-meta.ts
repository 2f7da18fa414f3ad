import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import type { GroupVersionKind } from '../manifests/object-ref.js';
import {
  PatchMetaLookupError,
  parsePatchStrategies,
  type FieldPatchMeta,
  type PatchMeta,
} from './patch-meta.js';

const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** What one OpenAPI document says about patching one kind (docs/merge-semantics.md#8-patch-metadata). */
export interface OpenApiPatchInfo {
  /** Whether the kind's PATCH accepts a strategic merge patch; CRs and some aggregated APIs do not. */
  readonly strategicMerge: boolean;
  /** Metadata read from the kind's schema; undefined when the document has no schema for it. */
  readonly meta: PatchMeta | undefined;
}

/**
 * Reads patch metadata for `gvk` from an OpenAPI v3 group-version document (`/openapi/v3/apis/G/V`)
 * or the v2 document (`/openapi/v2`), as kubectl's patcher does: the SMP decision comes from the
 * PATCH operation of the kind (`requestBody.content` in v3, `consumes` in v2), the metadata from the
 * component schema whose `x-kubernetes-group-version-kind` names it. Pure: a function of the JSON.
 */
export function readOpenApiPatchInfo(document: JsonValue, gvk: GroupVersionKind): OpenApiPatchInfo {
  if (!isJsonObject(document)) return { strategicMerge: false, meta: undefined };
  const schemas = schemaTable(document);
  let strategicMerge = false;
  const paths = isJsonObject(document.paths) ? document.paths : {};
  for (const item of Object.values(paths)) {
    const patch = isJsonObject(item) ? item.patch : undefined;
    if (!isJsonObject(patch) || !namesGvk(patch['x-kubernetes-group-version-kind'], gvk)) continue;
    const content = isJsonObject(patch.requestBody) ? patch.requestBody.content : undefined;
    const consumes = Array.isArray(patch.consumes) ? patch.consumes : [];
    if (
      (isJsonObject(content) && STRATEGIC_MERGE_PATCH in content) ||
      consumes.includes(STRATEGIC_MERGE_PATCH)
    ) {
      strategicMerge = true;
    }
  }
  const name = Object.keys(schemas).find((key) =>
    namesGvk(schemas[key]?.['x-kubernetes-group-version-kind'], gvk),
  );
  const meta =
    name === undefined ? undefined : new OpenApiPatchMeta(schemas, schemas[name] as JsonObject, name);
  return { strategicMerge, meta };
}

function schemaTable(document: JsonObject): Readonly<Record<string, JsonObject>> {
  const components = document.components;
  if (isJsonObject(components) && isJsonObject(components.schemas))
    return components.schemas as Record<string, JsonObject>;
  if (isJsonObject(document.definitions)) return document.definitions as Record<string, JsonObject>;
  return {};
}

function namesGvk(value: JsonValue | undefined, gvk: GroupVersionKind): boolean {
  const entries = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return entries.some(
    (entry) =>
      isJsonObject(entry) &&
      entry.group === gvk.group &&
      entry.version === gvk.version &&
      entry.kind === gvk.kind,
  );
}

/**
 * Follows `$ref` (`#/components/schemas/X` in v3, `#/definitions/X` in v2) and the single-element
 * `allOf` v3 wraps references in, to the schema that has `properties`, `items` or
 * `additionalProperties`.
 */
function resolveSchema(
  schemas: Readonly<Record<string, JsonObject>>,
  schema: JsonObject,
): { schema: JsonObject; name: string } {
  let current = schema;
  let name = '';
  for (let depth = 0; depth < 32; depth++) {
    const ref = current.$ref;
    if (typeof ref === 'string') {
      name = ref.slice(ref.lastIndexOf('/') + 1);
      current = schemas[name] ?? {};
      continue;
    }
    const allOf = current.allOf;
    if (Array.isArray(allOf) && allOf.length > 0 && isJsonObject(allOf[0])) {
      current = allOf[0];
      continue;
    }
    break;
  }
  return { schema: current, name };
}

class OpenApiPatchMeta implements PatchMeta {
  constructor(
    private readonly schemas: Readonly<Record<string, JsonObject>>,
    private readonly schema: JsonObject,
    readonly name: string,
  ) {}

  lookupObjectField(key: string): FieldPatchMeta {
    const properties = this.schema.properties;
    if (isJsonObject(properties)) {
      const property = properties[key];
      if (!isJsonObject(property)) throw new PatchMetaLookupError(this.name, key);
      return this.field(property);
    }
    const values = this.schema.additionalProperties;
    if (isJsonObject(values)) {
      // A map: its values' type, with no strategy of their own (like a Go map in a struct).
      const resolved = resolveSchema(this.schemas, values);
      return {
        meta: new OpenApiPatchMeta(this.schemas, resolved.schema, resolved.name || this.name),
        strategies: [],
        mergeKey: '',
      };
    }
    throw new PatchMetaLookupError(this.name, key);
  }

  lookupListField(key: string): FieldPatchMeta {
    const field = this.lookupObjectField(key);
    const list = (field.meta as OpenApiPatchMeta).schema;
    const items = list.items;
    if (!isJsonObject(items)) return field;
    const resolved = resolveSchema(this.schemas, items);
    return {
      ...field,
      meta: new OpenApiPatchMeta(this.schemas, resolved.schema, resolved.name || field.meta.name),
    };
  }

  private field(property: JsonObject): FieldPatchMeta {
    // The extensions sit on the property, next to its `allOf: [{$ref}]`, not on the referenced schema.
    const strategy = property['x-kubernetes-patch-strategy'];
    const mergeKey = property['x-kubernetes-patch-merge-key'];
    const resolved = resolveSchema(this.schemas, property);
    return {
      meta: new OpenApiPatchMeta(this.schemas, resolved.schema, resolved.name || this.name),
      strategies: parsePatchStrategies(typeof strategy === 'string' ? strategy : undefined),
      mergeKey: typeof mergeKey === 'string' ? mergeKey : '',
    };
  }
}

/** One field's patch metadata in the committed table; paths join field names with '.', lists add nothing. */
export interface PatchMetaTableEntry {
  readonly strategy?: string;
  readonly mergeKey?: string;
}
/** `group/version/Kind` (core group: `v1/Kind`) → field path → metadata. */
export type PatchMetaTable = Record<string, Record<string, PatchMetaTableEntry>>;

/** The key of a kind in a PatchMetaTable. */
export function patchMetaTableKey(gvk: GroupVersionKind): string {
  return gvk.group === '' ? `${gvk.version}/${gvk.kind}` : `${gvk.group}/${gvk.version}/${gvk.kind}`;
}

/**
 * Flattens the patch metadata of every strategic-merge kind in OpenAPI v3 group-version documents
 * into a table, for the offline built-in lookup. Recursive types are cut where a schema repeats on
 * its own path.
 */
export function buildPatchMetaTable(
  documents: readonly JsonValue[],
  kinds?: ReadonlySet<string>,
): PatchMetaTable {
  const table: PatchMetaTable = {};
  for (const document of documents) {
    if (!isJsonObject(document)) continue;
    const schemas = schemaTable(document);
    for (const [name, schema] of Object.entries(schemas)) {
      const gvks = schema['x-kubernetes-group-version-kind'];
      for (const gvk of Array.isArray(gvks) ? gvks : []) {
        if (!isJsonObject(gvk) || typeof gvk.kind !== 'string' || typeof gvk.version !== 'string') continue;
        const id = { group: String(gvk.group ?? ''), version: gvk.version, kind: gvk.kind };
        const key = patchMetaTableKey(id);
        if (kinds !== undefined && !kinds.has(key)) continue;
        if (!readOpenApiPatchInfo(document, id).strategicMerge) continue;
        const entries: Record<string, PatchMetaTableEntry> = {};
        collectEntries(schemas, schema, '', new Set([name]), entries);
        table[key] = entries;
      }
    }
  }
  return table;
}

function collectEntries(
  schemas: Readonly<Record<string, JsonObject>>,
  schema: JsonObject,
  prefix: string,
  seen: ReadonlySet<string>,
  out: Record<string, PatchMetaTableEntry>,
): void {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  for (const [field, property] of Object.entries(properties)) {
    if (!isJsonObject(property)) continue;
    const path = prefix === '' ? field : `${prefix}.${field}`;
    const strategy = property['x-kubernetes-patch-strategy'];
    const mergeKey = property['x-kubernetes-patch-merge-key'];
    if (typeof strategy === 'string' || typeof mergeKey === 'string') {
      out[path] = {
        ...(typeof strategy === 'string' ? { strategy } : {}),
        ...(typeof mergeKey === 'string' ? { mergeKey } : {}),
      };
    }
    let resolved = resolveSchema(schemas, property);
    if (isJsonObject(resolved.schema.items)) resolved = resolveSchema(schemas, resolved.schema.items);
    if (resolved.name !== '' && seen.has(resolved.name)) continue;
    collectEntries(schemas, resolved.schema, path, new Set([...seen, resolved.name]), out);
  }
}
