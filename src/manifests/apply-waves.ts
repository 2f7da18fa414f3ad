import { compareObjectRefs, type ObjectRef } from './object-ref.js';

/**
 * The apply waves, in order. Objects of one wave do not depend on each other for creation, so the
 * executor may apply a wave concurrently; it finishes a wave before starting the next.
 *
 * - `foundation`: Namespaces and CRDs, which everything else may live in or be an instance of (the
 *   executor waits for the CRDs to be Established after this wave).
 * - `dependencies`: what workloads reference (ServiceAccounts, Roles, ConfigMaps, Secrets, volumes,
 *   Services, quotas, classes).
 * - `bindings`: RoleBindings and ClusterRoleBindings, after the roles they name: without the `bind`
 *   verb, RBAC escalation prevention only lets us bind a role that already exists.
 * - `workloads`: what starts Pods, and Pods.
 * - `rest`: everything else, custom resources included (Ingress, HPA, PDB, webhooks, ...).
 */
const APPLY_WAVES = ['foundation', 'dependencies', 'bindings', 'workloads', 'rest'] as const;
export type ApplyWave = (typeof APPLY_WAVES)[number];

/**
 * The prune waves, in order: the apply order reversed, with the foundation wave split so custom
 * resources go before their CRD (in `rest`) and Namespaces go last of all (deleting one deletes its
 * contents, which must already have been judged one by one).
 */
const PRUNE_WAVES = ['rest', 'workloads', 'bindings', 'dependencies', 'crds', 'namespaces'] as const;
export type PruneWave = (typeof PRUNE_WAVES)[number];

const RBAC = 'rbac.authorization.k8s.io';

/** `group/Kind` → wave, for the kinds that are not `rest`. */
const WAVE_OF_KIND: ReadonlyMap<string, ApplyWave> = new Map<string, ApplyWave>([
  ['/Namespace', 'foundation'],
  ['apiextensions.k8s.io/CustomResourceDefinition', 'foundation'],
  ['/ServiceAccount', 'dependencies'],
  [`${RBAC}/Role`, 'dependencies'],
  [`${RBAC}/ClusterRole`, 'dependencies'],
  ['/ConfigMap', 'dependencies'],
  ['/Secret', 'dependencies'],
  ['/PersistentVolumeClaim', 'dependencies'],
  ['/PersistentVolume', 'dependencies'],
  ['/Service', 'dependencies'],
  ['/LimitRange', 'dependencies'],
  ['/ResourceQuota', 'dependencies'],
  ['storage.k8s.io/StorageClass', 'dependencies'],
  ['scheduling.k8s.io/PriorityClass', 'dependencies'],
  [`${RBAC}/RoleBinding`, 'bindings'],
  [`${RBAC}/ClusterRoleBinding`, 'bindings'],
  ['apps/Deployment', 'workloads'],
  ['apps/StatefulSet', 'workloads'],
  ['apps/DaemonSet', 'workloads'],
  ['apps/ReplicaSet', 'workloads'],
  ['batch/Job', 'workloads'],
  ['batch/CronJob', 'workloads'],
  ['/Pod', 'workloads'],
  ['/ReplicationController', 'workloads'],
]);

/** @internal test seam: a pure step its unit test runs alone */
export function applyWaveOf(ref: Pick<ObjectRef, 'group' | 'kind'>): ApplyWave {
  return WAVE_OF_KIND.get(`${ref.group}/${ref.kind}`) ?? 'rest';
}

/** @internal test seam: a pure step its unit test runs alone */
export function pruneWaveOf(ref: Pick<ObjectRef, 'group' | 'kind'>): PruneWave {
  const wave = applyWaveOf(ref);
  if (wave !== 'foundation') return wave;
  return isNamespace(ref) ? 'namespaces' : 'crds';
}

export function isNamespace(ref: Pick<ObjectRef, 'group' | 'kind'>): boolean {
  return ref.group === '' && ref.kind === 'Namespace';
}

export function isCustomResourceDefinition(ref: Pick<ObjectRef, 'group' | 'kind'>): boolean {
  return ref.group === 'apiextensions.k8s.io' && ref.kind === 'CustomResourceDefinition';
}

/**
 * Groups items into the apply waves, keeping the input order inside a wave (the order of the files,
 * which is what a reader of the directory expects to see). Empty waves are left out.
 */
export function groupIntoApplyWaves<T>(
  items: readonly T[],
  refOf: (item: T) => ObjectRef,
): { wave: ApplyWave; items: T[] }[] {
  return APPLY_WAVES.map((wave) => ({
    wave,
    items: items.filter((item) => applyWaveOf(refOf(item)) === wave),
  })).filter((group) => group.items.length > 0);
}

/**
 * Groups items into the prune waves. Inside a wave the order is the refs' sorted order: prune
 * candidates come from the inventory, which has no file order.
 */
export function groupIntoPruneWaves<T>(
  items: readonly T[],
  refOf: (item: T) => ObjectRef,
): { wave: PruneWave; items: T[] }[] {
  return PRUNE_WAVES.map((wave) => ({
    wave,
    items: items
      .filter((item) => pruneWaveOf(refOf(item)) === wave)
      .sort((a, b) => compareObjectRefs(refOf(a), refOf(b))),
  })).filter((group) => group.items.length > 0);
}
