import {
  PatchMetaLookupError,
  parsePatchStrategies,
  type FieldPatchMeta,
  type PatchMeta,
} from '../../src/merge/patch-meta.js';

/**
 * A Go-type-like description of a kind, enough for patch metadata: what kubectl's compiled-in
 * structs give `PatchMetaFromStruct`. `any` is interface{}: looking into it fails, as in Go.
 */
export type PatchSchema =
  | {
      readonly kind: 'struct';
      readonly name: string;
      readonly fields: Readonly<Record<string, PatchSchemaField>>;
    }
  | { readonly kind: 'map'; readonly values: PatchSchema }
  | { readonly kind: 'list'; readonly items: PatchSchema }
  | { readonly kind: 'scalar' }
  | { readonly kind: 'any' };

export interface PatchSchemaField {
  /** A thunk allows recursive types. */
  readonly type: PatchSchema | (() => PatchSchema);
  /** `x-kubernetes-patch-strategy` / the `patchStrategy` tag, e.g. `merge,retainKeys`. */
  readonly strategy?: string;
  readonly mergeKey?: string;
}

/** Patch metadata read from a PatchSchema with the lookup rules of apimachinery's PatchMetaFromStruct. */
export function schemaPatchMeta(schema: PatchSchema): PatchMeta {
  return new SchemaPatchMeta(schema);
}

class SchemaPatchMeta implements PatchMeta {
  constructor(private readonly schema: PatchSchema) {}

  get name(): string {
    return this.schema.kind === 'struct' ? this.schema.name : this.schema.kind;
  }

  lookupObjectField(key: string): FieldPatchMeta {
    const schema = this.schema;
    if (schema.kind === 'map')
      return { meta: new SchemaPatchMeta(schema.values), strategies: [], mergeKey: '' };
    if (schema.kind !== 'struct') throw new PatchMetaLookupError(this.name, key);
    const field = schema.fields[key];
    if (field === undefined) throw new PatchMetaLookupError(schema.name, key);
    const type = typeof field.type === 'function' ? field.type() : field.type;
    return {
      meta: new SchemaPatchMeta(type),
      strategies: parsePatchStrategies(field.strategy),
      mergeKey: field.mergeKey ?? '',
    };
  }

  lookupListField(key: string): FieldPatchMeta {
    const field = this.lookupObjectField(key);
    const type = (field.meta as SchemaPatchMeta).schema;
    // A pointer-to-struct used as a list (upstream's mergeItemPtr) stands for its element.
    const items = type.kind === 'list' ? type.items : type;
    return { ...field, meta: new SchemaPatchMeta(items) };
  }
}
