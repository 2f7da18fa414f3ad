import type { ObjectRef } from '../manifests/object-ref.js';
import { computeApplyHash } from './apply-hash.js';
import { computeApplySetId, type ApplySetIdentity } from './applyset-id.js';
import { formatInventory } from './format-inventory.js';
import { encodeInventory } from './inventory-encoding.js';
import { APPLY_CONFIG_TRUE, MetadataKeys } from './metadata-keys.js';

/**
 * `<tool>/<version>`, the KEP-3659 tooling format; kubectl refuses to touch sets of another tool.
 * @internal test seam: a pure step its unit test runs alone
 */
export function formatTooling(name: string, version: string): string {
  return `${name}/${version.startsWith('v') ? version : `v${version}`}`;
}

export const DEFAULT_TOOLING = formatTooling('applyset-controller', '0.1.0');

export interface ParentMetadata {
  readonly labels: Readonly<Record<string, string>>;
  /** A null value removes the annotation (the compressed inventory key, once the set is small again). */
  readonly annotations: Readonly<Record<string, string | null>>;
}

/** What every member of a set carries: plain labels and annotations, nothing to remove. */
export interface MemberMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * What the apply-config object carries for a given inventory: the proposal's label and list, and the
 * KEP-3659 parent metadata computed from the same list, so kubectl (`--applyset`) sees the same set.
 * The hash label is left out unless `withHash`: it is written in its own, last step.
 */
export function applySetParentMetadata(input: {
  readonly parent: ApplySetIdentity;
  readonly inventory: readonly ObjectRef[];
  readonly tooling: string;
  readonly withHash: boolean;
}): ParentMetadata {
  const { parent, inventory, tooling, withHash } = input;
  const namespaces = new Set(inventory.map((ref) => ref.namespace));
  namespaces.delete('');
  namespaces.delete(parent.namespace);
  const labels: Record<string, string> = {
    [MetadataKeys.applyConfig]: APPLY_CONFIG_TRUE,
    [MetadataKeys.applySetId]: computeApplySetId(parent),
  };
  if (withHash) labels[MetadataKeys.applyHash] = computeApplyHash(inventory);
  return {
    labels,
    annotations: {
      // Plain as kubectl writes it; compressed past the plain limit (see inventory-encoding.ts).
      ...encodeInventory(formatInventory(inventory)),
      [MetadataKeys.applySetTooling]: tooling,
      [MetadataKeys.applySetContainsGroupKinds]: formatContainsGroupKinds(inventory),
      // kubectl's generateNamespacesAnnotation: sorted, the parent's own namespace left out.
      [MetadataKeys.applySetAdditionalNamespaces]: [...namespaces].sort().join(','),
    },
  };
}

/** What every member carries: the proposal's owner annotation and the KEP-3659 membership label. */
export function applySetMemberMetadata(input: {
  readonly ownerUid: string;
  readonly parent: ApplySetIdentity;
}): MemberMetadata {
  return {
    labels: { [MetadataKeys.applySetPartOf]: computeApplySetId(input.parent) },
    annotations: { [MetadataKeys.applyOwner]: input.ownerUid },
  };
}

/**
 * The KEP-3659 `applyset.kubernetes.io/contains-group-kinds` value as kubectl writes it
 * (`generateKindsAnnotation`): each GroupKind as Go's `GroupKind.String()` prints it (`Kind` for the
 * core group, `Kind.group` otherwise), deduplicated, sorted by byte order, joined by ','.
 * @internal test seam: a pure step its unit test runs alone
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
