/**
 * The labels and annotations this project reads and writes on the cluster: the table is in
 * docs/architecture.md#5-names-written-on-the-cluster, their use in docs/inventory-protocol.md (the
 * apply-config object, member marks, KEP-3659 metadata). The `kubectl.kubernetes.io/apply-*` names
 * come from the kubectl apply prune proposal;
 * the `applyset.kubernetes.io/*` names from KEP-3659, so kubectl and other tools recognise our sets.
 */
export const MetadataKeys = {
  /** Label marking the apply-config object. */
  applyConfig: 'kubectl.kubernetes.io/apply-cfg',
  /** Annotation on the apply-config object: `namespace:group:kind:name`, one per line, sorted. */
  lastAppliedObjects: 'kubectl.kubernetes.io/last-applied-objects',
  /** Label on the apply-config object: hash of that list, written last as the sign a run completed. */
  applyHash: 'kubectl.kubernetes.io/apply-hash',
  /** Annotation on every member: uid of the apply-config object that owns it. */
  applyOwner: 'kubectl.kubernetes.io/apply-owner',
  /** Label on every member (KEP-3659). */
  applySetPartOf: 'applyset.kubernetes.io/part-of',
  /** Label on the parent (KEP-3659). */
  applySetId: 'applyset.kubernetes.io/id',
  /** Annotation on the parent (KEP-3659): `<tool>/<version>`. */
  applySetTooling: 'applyset.kubernetes.io/tooling',
  /** Annotation on the parent (KEP-3659): sorted `Kind.group` list. */
  applySetContainsGroupKinds: 'applyset.kubernetes.io/contains-group-kinds',
  /** Annotation on the parent (KEP-3659): namespaces of members other than the parent's own. */
  applySetAdditionalNamespaces: 'applyset.kubernetes.io/additional-namespaces',
  /** Annotation on any member: `disabled` means never prune it. */
  prune: 'applyset.dev/prune',
} as const;

export const PRUNE_DISABLED = 'disabled';
export const APPLY_CONFIG_TRUE = 'true';
