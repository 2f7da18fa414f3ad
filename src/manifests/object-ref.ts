/**
 * The identity of an object on the cluster: group, kind, namespace, name. The version is not part of
 * it, as the prune proposal notes: any served version reaches the same object.
 */
export interface ObjectRef {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly kind: string;
  /** '' for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/**
 * The string form of a ref: `namespace:group:kind:name`, the line format of
 * `kubectl.kubernetes.io/last-applied-objects`. The namespace, group and kind cannot contain ':' (DNS
 * labels, DNS subdomains, CamelCase kinds); the name can (`system:auth-delegator`), and is last, so the
 * form stays unambiguous and usable as a map key: the name is everything after the third ':'.
 */
export function objectRefKey(ref: ObjectRef): string {
  return `${ref.namespace}:${ref.group}:${ref.kind}:${ref.name}`;
}

/**
 * The form kubectl prints in its per-object lines: `deployment.apps/web`, `configmap/settings`,
 * followed by the namespace when there is one (`-n` style, so two objects of the same name differ).
 */
export function describeObjectRef(ref: ObjectRef): string {
  const type = ref.group === '' ? ref.kind.toLowerCase() : `${ref.kind.toLowerCase()}.${ref.group}`;
  return ref.namespace === '' ? `${type}/${ref.name}` : `${type}/${ref.name} -n ${ref.namespace}`;
}

/** Total order on refs, by their string form, so every list we print or store is stable. */
export function compareObjectRefs(a: ObjectRef, b: ObjectRef): number {
  const ka = objectRefKey(a);
  const kb = objectRefKey(b);
  // Code-unit order, like Go's sort.Strings, not locale order: the stored list must not depend on
  // the machine's locale.
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Splits an apiVersion the way apimachinery's ParseGroupVersion does: `v1` is the core group,
 * `apps/v1` is group `apps`; anything with more than one '/' is invalid (undefined).
 */
export function parseApiVersion(apiVersion: string): { group: string; version: string } | undefined {
  const parts = apiVersion.split('/');
  if (parts.length === 1 && parts[0] !== '') return { group: '', version: apiVersion };
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '') {
    return { group: parts[0] as string, version: parts[1] as string };
  }
  return undefined;
}
