import type { GroupVersionKind } from './object-ref.js';

export type Scope = 'Namespaced' | 'Cluster';

/**
 * What the loader needs from discovery: whether a kind is namespaced. The answer comes from the
 * cluster (a REST mapper in the shell); `undefined` means the kind is not known there.
 */
export interface ScopeResolver {
  scopeOf(gvk: GroupVersionKind): Scope | undefined;
}
