import type { PatchMetaTableEntry } from './openapi-patch-meta.js';
import { parsePatchStrategies, type FieldPatchMeta, type PatchMeta } from './patch-meta.js';

/**
 * Patch metadata from a flattened table (field path → strategy and merge key). The table lists
 * only fields that have metadata, so every other field is a plain recursive merge or an atomic list;
 * unlike a schema it cannot tell an unknown field from a known one, so lookups never fail. kubectl
 * would refuse a changed unknown object field; the API server still rejects such a patch.
 */
export function tablePatchMeta(
  entries: Readonly<Record<string, PatchMetaTableEntry>>,
  name: string,
): PatchMeta {
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
