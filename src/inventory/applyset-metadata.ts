import type { ObjectRef } from '../manifests/object-ref.js';
import { computeApplyHash } from './apply-hash.js';
import { computeApplySetId, type ApplySetParent } from './applyset-id.js';
import { formatContainsGroupKinds } from './contains-group-kinds.js';
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
  readonly parent: ApplySetParent;
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
  readonly parent: ApplySetParent;
}): MemberMetadata {
  return {
    labels: { [MetadataKeys.applySetPartOf]: computeApplySetId(input.parent) },
    annotations: { [MetadataKeys.applyOwner]: input.ownerUid },
  };
}
