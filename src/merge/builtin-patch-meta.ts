import type { GroupVersionKind } from '../manifests/object-ref.js';
import table from './builtin-patch-meta.json' with { type: 'json' };
import { patchMetaTableKey, type PatchMetaTable, type PatchMetaTableEntry } from './openapi-patch-meta.js';
import { parsePatchStrategies, type FieldPatchMeta, type PatchMeta } from './patch-meta.js';

const kinds: PatchMetaTable = table.kinds;

/**
 * Patch metadata for a built-in kind from the committed table, so the engine works offline (the
 * `patch` command, tests, previews). Undefined for kinds the table does not know: custom resources
 * take the JSON merge path, other kinds need the server's OpenAPI.
 */
export function builtinPatchMeta(gvk: GroupVersionKind): PatchMeta | undefined {
  const entries = kinds[patchMetaTableKey(gvk)];
  return entries === undefined ? undefined : tablePatchMeta(entries, gvk.kind);
}

/**
 * Patch metadata from a flattened table (field path → strategy and merge key). The table lists
 * only fields that have metadata, so every other field is a plain recursive merge or an atomic list;
 * unlike a schema it cannot tell an unknown field from a known one, so lookups never fail. kubectl
 * would refuse a changed unknown object field; the API server still rejects such a patch.
 */
function tablePatchMeta(entries: Readonly<Record<string, PatchMetaTableEntry>>, name: string): PatchMeta {
  return new TablePatchMeta(entries, name, '');
}

class TablePatchMeta implements PatchMeta {
  constructor(
    private readonly entries: Readonly<Record<string, PatchMetaTableEntry>>,
    readonly name: string,
    private readonly prefix: string,
  ) {}

  lookupObjectField(key: string): FieldPatchMeta {
    const path = this.prefix === '' ? key : `${this.prefix}.${key}`;
    const entry = this.entries[path];
    return {
      meta: new TablePatchMeta(this.entries, this.name, path),
      strategies: parsePatchStrategies(entry?.strategy),
      mergeKey: entry?.mergeKey ?? '',
    };
  }

  lookupListField(key: string): FieldPatchMeta {
    return this.lookupObjectField(key);
  }
}
