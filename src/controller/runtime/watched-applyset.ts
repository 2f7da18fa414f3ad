import {
  APPROVE_PRUNE_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  SKIP_PRE_DELETE_HOOKS_ANNOTATION,
  type ApplySet,
} from '../../api/applyset-types.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import { applySetAccount } from '../../api/applyset-account.js';
import { lenientApplySetSpec } from '../../api/resolve-applyset-spec.js';
import { objectsKubeConfigOf } from '../cluster-move-step.js';
import type { SecretReference } from './secret-change-poller.js';
import type { InformerEvent } from '../../kube/informer-cache.js';

/*
 * Pure readings of an ApplySet as the informer holds it (raw JSON): which watch events call for a
 * reconcile, of it or of the ApplySets depending on it, its queue key, whether it is Ready and which
 * Secret to poll for it.
 */

/**
 * Flux's predicates: a new object, a new generation (a spec change), a deletion starting, or a new
 * value of the reconcile-requested-at annotation. Our own writes (status, finalizer, inventory
 * annotations) change none of these, so they do not loop back into the queue.
 */
export function needsReconcile(event: InformerEvent): boolean {
  if (event.type !== 'modified' || event.previous === undefined) return true;
  const before = metadataOf(event.previous);
  const after = metadataOf(event.object);
  const annotation = (m: JsonObject, key: string) => {
    const annotations = m['annotations'];
    return isJsonObject(annotations) ? annotations[key] : undefined;
  };
  // A request to reconcile, an approval to prune past the limit, or a deletion told to skip its
  // PreDelete hooks, is acted on at once.
  const asked = (key: string) => annotation(before, key) !== annotation(after, key);
  return (
    before['generation'] !== after['generation'] ||
    (before['deletionTimestamp'] === undefined && after['deletionTimestamp'] !== undefined) ||
    asked(RECONCILE_REQUESTED_AT_ANNOTATION) ||
    asked(APPROVE_PRUNE_ANNOTATION) ||
    asked(SKIP_PRE_DELETE_HOOKS_ANNOTATION)
  );
}

/** The informer holds ApplySets exactly as the API server sends them. */
function asApplySet(object: JsonObject): ApplySet {
  return object as unknown as ApplySet;
}

function metadataOf(object: JsonObject): JsonObject {
  const metadata = object['metadata'];
  return isJsonObject(metadata) ? metadata : {};
}

/** `namespace/name`: the work queue's key of an ApplySet. */
export function applySetKey(object: JsonObject): string {
  const metadata = metadataOf(object);
  return `${String(metadata['namespace'] ?? '')}/${String(metadata['name'])}`;
}

/**
 * The Secrets the ApplySet names (its Git credentials, its spec.decryption age keys, its spec.kubeConfig
 * remote cluster, the kubeconfig of the cluster its objects are still on when a move is held, and its
 * spec.helm.valuesFrom Secrets), unless
 * it names none or is suspended. Being deleted, only the kubeconfig its finalizer reads: deleting that
 * Secret lets the ApplySet go within a poll, not at the end of its backoff (docs/remote-clusters.md). A Git
 * credentials Secret of another namespace the controller does not trust is left out (the reconcile
 * refuses it; never polled); the other two are always of the ApplySet's own namespace. With the user the
 * reconcile reads them as (spec.serviceAccountName, else `defaultServiceAccount`, else the controller):
 * the poller reads them as that account too, never with the controller's rights.
 * @internal A pure reading its tests check case by case; the controller asks through secretReferences.
 */
export function secretReferenceOf(
  applySet: JsonObject,
  trustedNamespaces: ReadonlySet<string>,
  defaultServiceAccount?: string,
): SecretReference | undefined {
  // Read leniently, not through the whole view: the poller asks on every tick. The account is the
  // one rule's (applySetAccount), as the view's.
  const spec = lenientApplySetSpec(applySet['spec']);
  const metadata = metadataOf(applySet);
  if (spec.suspend) return undefined;
  const ownNamespace = String(metadata['namespace'] ?? '');
  const { user } = applySetAccount(ownNamespace, spec, defaultServiceAccount);
  const objectsOn = objectsKubeConfigOf(asApplySet(applySet), spec.kubeConfig)?.secretName;
  if (metadata['deletionTimestamp'] !== undefined) {
    if (objectsOn === undefined) return undefined;
    const secrets = [{ namespace: ownNamespace, secretName: objectsOn }];
    return { key: applySetKey(applySet), secrets, ...(user === undefined ? {} : { user }) };
  }
  const gitNamespace = spec.secretNamespace ?? ownNamespace;
  const trusted = gitNamespace === ownNamespace || trustedNamespaces.has(gitNamespace);
  const secrets = [
    trusted ? { namespace: gitNamespace, secretName: spec.secretName } : undefined,
    { namespace: ownNamespace, secretName: spec.decryptionSecretName },
    { namespace: ownNamespace, secretName: spec.kubeConfig?.secretName },
    objectsOn === spec.kubeConfig?.secretName
      ? undefined
      : { namespace: ownNamespace, secretName: objectsOn },
    ...spec.valuesFromSecretNames.map((secretName) => ({ namespace: ownNamespace, secretName })),
  ].flatMap((secret) =>
    secret?.secretName === undefined ? [] : [{ namespace: secret.namespace, secretName: secret.secretName }],
  );
  if (secrets.length === 0) return undefined;
  return { key: applySetKey(applySet), secrets, ...(user === undefined ? {} : { user }) };
}

/**
 * secretReferenceOf for the controller's settings, read once per version of an ApplySet: the informer
 * replaces its object on every change and never changes one, so the object itself keys the answer (a
 * WeakMap, which lets it go with the version). Each reconcile asks (the poller's baseline), and every
 * poll asks of each ApplySet not Ready: at rest, the spec is not parsed again for either.
 */
export function secretReferences(
  trustedNamespaces: ReadonlySet<string>,
  defaultServiceAccount: string | undefined,
): (applySet: JsonObject) => SecretReference | undefined {
  const read = new WeakMap<JsonObject, SecretReference | undefined>();
  return (applySet) => {
    if (read.has(applySet)) return read.get(applySet);
    const reference = secretReferenceOf(applySet, trustedNamespaces, defaultServiceAccount);
    read.set(applySet, reference);
    return reference;
  };
}

function isReady(applySet: JsonObject): boolean {
  const status = applySet['status'];
  const conditions = isJsonObject(status) ? status['conditions'] : undefined;
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True')
  );
}

/** Its deletion has started: its finalizer runs until the children are pruned or let go. */
function isDeleting(applySet: JsonObject): boolean {
  return metadataOf(applySet)['deletionTimestamp'] !== undefined;
}

/**
 * Its Secrets are polled for a change: it is not Ready (a fixed Secret may unblock it), or it is being
 * deleted (its finalizer may wait for a kubeconfig Secret to answer or be removed).
 */
export function pollsSecrets(applySet: JsonObject): boolean {
  return !isReady(applySet) || isDeleting(applySet);
}
