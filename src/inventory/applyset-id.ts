import { hash } from 'node:crypto';

/**
 * What names an apply-config object for its id: the four fields kubectl hashes. The engine's whole
 * parent (`ApplySetParent` in src/apply/apply-set-contract.ts) has them and more.
 */
export interface ApplySetIdentity {
  readonly name: string;
  /** '' for a cluster-scoped parent. */
  readonly namespace: string;
  readonly kind: string;
  /** '' for the core group. */
  readonly group: string;
}

/**
 * The KEP-3659 ApplySet id, exactly as kubectl computes it (k8s.io/kubectl/pkg/cmd/apply/applyset.go,
 * `ApplySet.ID`): `applyset-<base64url(sha256("<name>.<namespace>.<kind>.<group>")), no padding>-v1`.
 * The prefix and the `-v1` suffix make it a valid label value (it must start and end alphanumeric).
 * A reconcile asks for it several times: the one-shot `hash` makes no hash object for a string this
 * short.
 */
export function computeApplySetId(parent: ApplySetIdentity): string {
  const unencoded = [parent.name, parent.namespace, parent.kind, parent.group].join('.');
  const digest = hash('sha256', unencoded, 'base64url');
  return `applyset-${digest}-v1`;
}
