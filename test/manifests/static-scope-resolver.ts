import type { Scope, ScopeResolver } from '../../src/manifests/scope-resolver.js';

/** A resolver from a fixed table, `group/Kind` → scope, standing in for discovery in pure tests. */
export function staticScopeResolver(table: Readonly<Record<string, Scope>>): ScopeResolver {
  return {
    scopeOf: (gvk) => table[`${gvk.group}/${gvk.kind}`],
  };
}
