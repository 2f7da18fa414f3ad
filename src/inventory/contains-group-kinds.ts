import type { ObjectRef } from '../manifests/object-ref.js';

/**
 * The KEP-3659 `applyset.kubernetes.io/contains-group-kinds` value as kubectl writes it
 * (`generateKindsAnnotation`): each GroupKind as Go's `GroupKind.String()` prints it (`Kind` for the
 * core group, `Kind.group` otherwise), deduplicated, sorted by byte order, joined by ','.
 */
export function formatContainsGroupKinds(refs: readonly Pick<ObjectRef, 'group' | 'kind'>[]): string {
  const names = new Set(refs.map((ref) => (ref.group === '' ? ref.kind : `${ref.kind}.${ref.group}`)));
  return [...names].sort(compareCodeUnits).join(',');
}

/**
 * Reads the annotation back, as kubectl's `schema.ParseGroupKind` does: the kind is up to the first
 * '.', the group is the rest. An empty value is an empty set.
 * @internal test seam: a pure step its unit test runs alone
 */
export function parseContainsGroupKinds(value: string): { group: string; kind: string }[] {
  if (value === '') return [];
  return value.split(',').map((entry) => {
    const dot = entry.indexOf('.');
    return dot === -1
      ? { group: '', kind: entry }
      : { group: entry.slice(dot + 1), kind: entry.slice(0, dot) };
  });
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
