import type { ApplySetParent } from '../apply/apply-set-contract.js';
import {
  APPLYSET_API_VERSION,
  APPLYSET_FINALIZER,
  APPLYSET_GROUP,
  APPLYSET_KIND,
  APPLYSET_PLURAL,
  APPLYSET_VERSION,
  type ApplySet,
} from '../api/applyset-types.js';
import type { JsonObject } from '../manifests/json-value.js';

/**
 * The ApplySet as the engine's parent: it always exists, so it is never created. `applySet` is the
 * object as the server last answered this reconcile (its GET, or the PATCH that re-added the
 * finalizer), which the engine takes rather than GET it again: one read of the ApplySet per
 * reconcile. Never the informer's copy, which lacks the inventory annotations (informerView).
 */
export function parentOf(applySet: ApplySet): ApplySetParent {
  return {
    group: APPLYSET_GROUP,
    version: APPLYSET_VERSION,
    kind: APPLYSET_KIND,
    resource: APPLYSET_PLURAL,
    namespace: applySet.metadata.namespace,
    name: applySet.metadata.name,
    createIfMissing: false,
    // Folded into the run's inventory widen: a first reconcile costs no write of its own for it.
    finalizer: APPLYSET_FINALIZER,
    live: applySet as unknown as JsonObject,
  };
}

/** The ApplySet as the subject of an Event. */
export function subjectOf(applySet: ApplySet) {
  return {
    apiVersion: APPLYSET_API_VERSION,
    kind: APPLYSET_KIND,
    namespace: applySet.metadata.namespace,
    name: applySet.metadata.name,
    uid: applySet.metadata.uid,
    resourceVersion: applySet.metadata.resourceVersion,
  };
}

/** `system:serviceaccount:<ns>:<name>`: the user a ServiceAccount's token authenticates as. */
export function impersonatedUser(
  namespace: string,
  serviceAccountName: string | undefined,
): string | undefined {
  return serviceAccountName === undefined
    ? undefined
    : `system:serviceaccount:${namespace}:${serviceAccountName}`;
}
