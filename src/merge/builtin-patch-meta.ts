import type { GroupVersionKind } from '../manifests/object-ref.js';
import table from './builtin-patch-meta.json' with { type: 'json' };
import { patchMetaTableKey, type PatchMetaTable } from './openapi-patch-meta.js';
import type { PatchMeta } from './patch-meta.js';
import { tablePatchMeta } from './table-patch-meta.js';

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
