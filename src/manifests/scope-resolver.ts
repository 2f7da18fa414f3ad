import type { GroupVersionKind } from './object-ref.js';

export type Scope = 'Namespaced' | 'Cluster';

/**
 * What the loader needs from discovery: whether a kind is namespaced. The answer comes from the
 * cluster (a REST mapper in the shell); `undefined` means the kind is not known there.
 */
export interface ScopeResolver {
  scopeOf(gvk: GroupVersionKind): Scope | undefined;
}

/** A resolver from a fixed table, `group/Kind` → scope; for tests and for the built-in kinds. */
export function staticScopeResolver(table: Readonly<Record<string, Scope>>): ScopeResolver {
  return {
    scopeOf: (gvk) => table[`${gvk.group}/${gvk.kind}`],
  };
}
