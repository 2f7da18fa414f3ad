import { MetadataKeys } from '../inventory/metadata-keys.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { manifestAnnotations } from '../manifests/manifest-annotations.js';
import {
  compareObjectRefs,
  describeObjectRef,
  objectRefKey,
  type ObjectRef,
} from '../manifests/object-ref.js';
import { LAST_APPLIED_ANNOTATION } from '../merge/last-applied-configuration.js';

/** One object a LIST returned, with its identity. */
export interface ListedObject {
  readonly ref: ObjectRef;
  readonly object: JsonObject;
}

/** What the set deletes in this run, as the plan read it (the uid, so a replacement is not taken for it). */
export interface PruningSet {
  /** The uid of the apply-config object. */
  readonly ownerUid: string;
  readonly pruning: readonly { readonly ref: ObjectRef; readonly uid: string | undefined }[];
}

const SERVICE_ACCOUNT_TOKEN = 'kubernetes.io/service-account-token';
const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

/**
 * Of the objects listed in a Namespace (or of a CRD's kind), those that belong to someone else and
 * would be deleted with it: the namespace controller deletes everything in a deleted Namespace, and
 * the apiextensions server every custom resource of a deleted CRD. Not others':
 *
 * - the set's own objects that this run deletes (matched by identity and uid), and what the garbage
 *   collector deletes with them: objects all of whose ownerReferences name such an object, a
 *   ServiceAccount token Secret of such a ServiceAccount, and the Endpoints the endpoints controller
 *   keeps under a pruned Service's name (it sets no ownerReference);
 * - objects already being deleted (a deletionTimestamp): deleting the holder takes nothing more;
 * - what the control plane puts in every namespace, as long as nobody applied over it: the `default`
 *   ServiceAccount (serviceaccount controller), the `kube-root-ca.crt` ConfigMap
 *   (root-ca-cert-publisher) and, on clusters before 1.24, the `default` account's token Secret;
 * - Events (core and events.k8s.io): records of what happened, owned by nobody and expired by the API
 *   server's event TTL; keeping a Namespace for them would keep every Namespace that ever had a Pod.
 * - metrics.k8s.io PodMetrics: a view of Pods (listed in their own right), not stored objects.
 *
 * Everything else counts, Leases included: a Lease is held by a running component (leader election)
 * that expects it to stay. The result is sorted and has each object once.
 */
export function objectsOfOthers(listed: readonly ListedObject[], set: PruningSet): ObjectRef[] {
  const ours = oursUids(listed, set);
  const prunedServices = new Set(
    set.pruning
      .filter(({ ref }) => ref.group === '' && ref.kind === 'Service')
      .map(({ ref }) => objectRefKey(ref)),
  );
  const seen = new Set<string>();
  const others: ObjectRef[] = [];
  for (const { ref, object } of listed) {
    const uid = metadataString(object, 'uid');
    if (uid !== undefined && ours.has(uid)) continue;
    if (metadataString(object, 'deletionTimestamp') !== undefined) continue;
    if (isEvent(ref) || isView(ref) || isControlPlaneDefault(ref, object, set.ownerUid)) continue;
    if (
      ref.group === '' &&
      ref.kind === 'Endpoints' &&
      prunedServices.has(objectRefKey({ ...ref, kind: 'Service' }))
    )
      continue;
    if (isTokenOf(object, ours)) continue;
    // The same object can be served under two groups (an old and a new API group): report it once.
    const key = uid ?? objectRefKey(ref);
    if (seen.has(key)) continue;
    seen.add(key);
    others.push(ref);
  }
  return others.sort(compareObjectRefs);
}

const SHOWN = 3;

/**
 * `holds 2 objects of others, e.g. secret/x, serviceaccount/y`: the reason a holder is kept. Objects
 * in `namespace` (the held Namespace itself) are named without it.
 */
export function describeObjectsOfOthers(others: readonly ObjectRef[], namespace: string): string {
  const names = others
    .slice(0, SHOWN)
    .map((ref) => describeObjectRef(ref.namespace === namespace ? { ...ref, namespace: '' } : ref));
  const count = others.length === 1 ? '1 object' : `${others.length} objects`;
  const more = others.length > SHOWN ? ', …' : '';
  return `holds ${count} of others, e.g. ${names.join(', ')}${more}`;
}

/**
 * The uids of what this run deletes: the planned deletions found by identity and uid, then, until
 * nothing changes, every listed object all of whose owners are among them (the garbage collector
 * deletes it with its owners; one owner of someone else's keeps it alive).
 */
function oursUids(listed: readonly ListedObject[], set: PruningSet): Set<string> {
  const ours = new Set<string>();
  const planned = new Map(set.pruning.map(({ ref, uid }) => [objectRefKey(ref), uid]));
  for (const { ref, object } of listed) {
    const key = objectRefKey(ref);
    const uid = metadataString(object, 'uid');
    if (uid === undefined || !planned.has(key)) continue;
    const plannedUid = planned.get(key);
    const owner = manifestAnnotations(object)[MetadataKeys.applyOwner];
    if (plannedUid === uid || (plannedUid === undefined && owner === set.ownerUid)) ours.add(uid);
  }
  for (const { uid } of set.pruning) if (uid !== undefined) ours.add(uid);
  for (let changed = true; changed; ) {
    changed = false;
    for (const { object } of listed) {
      const uid = metadataString(object, 'uid');
      if (uid === undefined || ours.has(uid)) continue;
      const owners = ownerUids(object);
      if (owners.length > 0 && owners.every((owner) => ours.has(owner))) {
        ours.add(uid);
        changed = true;
      }
    }
  }
  return ours;
}

/** metrics-server's PodMetrics: computed from the Pods, nothing stored that a delete could lose. */
function isView(ref: ObjectRef): boolean {
  return ref.group === 'metrics.k8s.io';
}

function isEvent(ref: ObjectRef): boolean {
  return ref.kind === 'Event' && (ref.group === '' || ref.group === 'events.k8s.io');
}

/** A default the control plane created and nobody applied over (no apply-owner but ours, no kubectl apply). */
function isControlPlaneDefault(ref: ObjectRef, object: JsonObject, ownerUid: string): boolean {
  const annotations = manifestAnnotations(object);
  const owner = annotations[MetadataKeys.applyOwner];
  if ((owner !== undefined && owner !== ownerUid) || annotations[LAST_APPLIED_ANNOTATION] !== undefined)
    return false;
  if (ref.group !== '') return false;
  if (ref.kind === 'ServiceAccount') return ref.name === 'default';
  if (ref.kind === 'ConfigMap') return ref.name === 'kube-root-ca.crt';
  if (ref.kind === 'Secret') {
    return object['type'] === SERVICE_ACCOUNT_TOKEN && annotations[SA_NAME_ANNOTATION] === 'default';
  }
  return false;
}

/** A token Secret the token controller made for a ServiceAccount this run deletes. */
function isTokenOf(object: JsonObject, ours: ReadonlySet<string>): boolean {
  const accountUid = manifestAnnotations(object)[SA_UID_ANNOTATION];
  return object['type'] === SERVICE_ACCOUNT_TOKEN && accountUid !== undefined && ours.has(accountUid);
}

function ownerUids(object: JsonObject): string[] {
  const metadata = object['metadata'];
  const references = isJsonObject(metadata) ? metadata['ownerReferences'] : undefined;
  if (!Array.isArray(references)) return [];
  return references.flatMap((reference) =>
    isJsonObject(reference) && typeof reference['uid'] === 'string' ? [reference['uid']] : [],
  );
}

function metadataString(object: JsonObject, field: string): string | undefined {
  const metadata = object['metadata'];
  const value = isJsonObject(metadata) ? metadata[field] : undefined;
  return typeof value === 'string' ? value : undefined;
}
