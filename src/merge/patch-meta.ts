/**
 * Patch metadata: what `patchStrategy`/`patchMergeKey` struct tags, or the OpenAPI extensions
 * `x-kubernetes-patch-strategy`/`x-kubernetes-patch-merge-key`, say about one field. The engine only
 * asks when both sides of a field hold objects, or both hold arrays
 * (docs/merge-semantics.md#8-patch-metadata).
 */
export interface PatchMeta {
  /** A readable name of the type this lookup is positioned on, for error messages. */
  readonly name: string;
  /** The field `key` of an object; throws `PatchMetaLookupError` when the type has no such field. */
  lookupObjectField(key: string): FieldPatchMeta;
  /** The list field `key`; `meta` describes the list's elements. Throws like `lookupObjectField`. */
  lookupListField(key: string): FieldPatchMeta;
}

export interface FieldPatchMeta {
  readonly meta: PatchMeta;
  /** As written, split on ',': `[]`, `['merge']`, `['replace']`, `['retainKeys']`, `['merge','retainKeys']`. */
  readonly strategies: readonly string[];
  /** '' when the field has none. */
  readonly mergeKey: string;
}

export class PatchMetaLookupError extends Error {
  override readonly name = 'PatchMetaLookupError';
  readonly code = 'PATCH_META_LOOKUP';
  constructor(
    readonly typeName: string,
    readonly field: string,
  ) {
    super(`unable to find api field in struct ${typeName} for the json field "${field}"`);
  }
}

/** Splits `x-kubernetes-patch-strategy` / a struct tag into its strategies. */
export function parsePatchStrategies(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  return text.split(',');
}

/**
 * Separates `retainKeys` from the other strategy, as apimachinery's extractRetainKeysPatchStrategy
 * does; anything other than one strategy, optionally paired with retainKeys, is refused.
 */
export function splitRetainKeys(strategies: readonly string[]): { retainKeys: boolean; strategy: string } {
  const [first, second] = strategies;
  if (first === undefined) return { retainKeys: false, strategy: '' };
  if (second === undefined) {
    return first === 'retainKeys'
      ? { retainKeys: true, strategy: '' }
      : { retainKeys: false, strategy: first };
  }
  if (strategies.length === 2) {
    if (first === 'retainKeys') return { retainKeys: true, strategy: second };
    if (second === 'retainKeys') return { retainKeys: true, strategy: first };
  }
  throw new PatchStrategyError(strategies);
}

class PatchStrategyError extends Error {
  override readonly name = 'PatchStrategyError';
  readonly code = 'PATCH_STRATEGY';
  constructor(readonly strategies: readonly string[]) {
    super(`unexpected patch strategy: [${strategies.join(' ')}]`);
  }
}
