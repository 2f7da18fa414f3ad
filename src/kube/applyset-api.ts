import { KubeApiError } from './kube-api-error.js';
import type { KubeClient } from './kube-client.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import type { ApplySetParent } from '../apply/apply-set-contract.js';
import {
  APPLYSET_API_VERSION,
  APPLYSET_FINALIZER,
  APPLYSET_GROUP,
  APPLYSET_KIND,
  APPLYSET_PLURAL,
  APPLYSET_VERSION,
  type ApplySet,
  type ApplySetStatus,
} from '../api/applyset-types.js';

/** @internal Tests script the answers of a status write with it. */
export type StatusWrite =
  | { readonly kind: 'written'; readonly resourceVersion: string | undefined }
  | { readonly kind: 'conflict' | 'gone' };

/** The few calls the reconciler makes as the controller itself. */
export interface ApplySetApi {
  get(namespace: string, name: string, signal: AbortSignal): Promise<ApplySet | undefined>;
  /**
   * Replaces metadata.finalizers, guarded by the resourceVersion read; resolves with the ApplySet as
   * the write left it (the server's answer: the whole object, at its new resourceVersion).
   */
  setFinalizers(applySet: ApplySet, finalizers: readonly string[], signal: AbortSignal): Promise<ApplySet>;
  /** Sets (null: removes) one annotation, guarded as setFinalizers is; the ApplySet as written. */
  setAnnotation(
    applySet: ApplySet,
    key: string,
    value: string | null,
    signal: AbortSignal,
  ): Promise<ApplySet>;
  /**
   * Writes the whole status through the status subresource, on condition that the ApplySet is still
   * at `resourceVersion` (the version the run's plan was made on and its own writes left it at).
   * `conflict`: someone else wrote it meanwhile, the run's view is stale, nothing was written.
   * `written` comes with the ApplySet's new resourceVersion, the condition of a later write of the run.
   */
  writeStatus(
    applySet: ApplySet,
    status: ApplySetStatus,
    resourceVersion: string | undefined,
    signal: AbortSignal,
  ): Promise<StatusWrite>;
  /** Whether the ServiceAccount exists: impersonating one that does not would fail object by object. */
  serviceAccountExists(namespace: string, name: string, signal: AbortSignal): Promise<boolean>;
}

export function applySetPath(namespace: string | undefined, name?: string): string {
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  const collection = `/apis/${APPLYSET_GROUP}/${APPLYSET_VERSION}${scope}/${APPLYSET_PLURAL}`;
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`;
}

function serviceAccountPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}`;
}

function secretPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
}

/**
 * The resourceVersion of a Secret, or undefined when there is none: what the controller polls to notice a
 * fixed credential without a list or watch of Secrets (see startSecretChangePoller). Keeps nothing else.
 */
export async function readSecretVersion(
  client: KubeClient,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  let secret;
  try {
    secret = await client.request({ method: 'GET', path: secretPath(namespace, name), signal });
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound) return undefined;
    throw error;
  }
  const metadata = isJsonObject(secret) ? secret['metadata'] : undefined;
  const version = isJsonObject(metadata) ? metadata['resourceVersion'] : undefined;
  return typeof version === 'string' ? version : '';
}

export function createApplySetApi(client: KubeClient): ApplySetApi {
  return {
    async get(namespace, name, signal) {
      try {
        return (await client.request({
          method: 'GET',
          path: applySetPath(namespace, name),
          signal,
        })) as unknown as ApplySet;
      } catch (error) {
        if (error instanceof KubeApiError && error.notFound) return undefined;
        throw error;
      }
    },
    async setFinalizers(applySet, finalizers, signal) {
      const { namespace, name, resourceVersion } = applySet.metadata;
      const updated = await client.request({
        method: 'PATCH',
        path: applySetPath(namespace, name),
        contentType: 'application/merge-patch+json',
        // The resourceVersion makes this a compare-and-swap: a 409 retries with a fresh read.
        body: JSON.stringify({ metadata: { finalizers, resourceVersion } }),
        signal,
      });
      return updated as unknown as ApplySet;
    },
    async setAnnotation(applySet, key, value, signal) {
      const { namespace, name, resourceVersion } = applySet.metadata;
      const updated = await client.request({
        method: 'PATCH',
        path: applySetPath(namespace, name),
        contentType: 'application/merge-patch+json',
        body: JSON.stringify({ metadata: { annotations: { [key]: value }, resourceVersion } }),
        signal,
      });
      return updated as unknown as ApplySet;
    },
    async writeStatus(applySet, status, resourceVersion, signal) {
      const { namespace, name } = applySet.metadata;
      try {
        const written = await client.request({
          method: 'PATCH',
          path: `${applySetPath(namespace, name)}/status`,
          contentType: 'application/merge-patch+json',
          body: JSON.stringify({
            ...(resourceVersion === undefined ? {} : { metadata: { resourceVersion } }),
            status,
          }),
          signal,
        });
        return { kind: 'written', resourceVersion: resourceVersionOf(written) };
      } catch (error) {
        // Deleted while we reconciled: there is no status left to write.
        if (error instanceof KubeApiError && error.notFound) return { kind: 'gone' };
        if (error instanceof KubeApiError && error.status === 409) return { kind: 'conflict' };
        throw error;
      }
    },
    async serviceAccountExists(namespace, name, signal) {
      try {
        await client.request({ method: 'GET', path: serviceAccountPath(namespace, name), signal });
        return true;
      } catch (error) {
        if (error instanceof KubeApiError && error.notFound) return false;
        throw error;
      }
    },
  };
}

/** A Secret that was read: its data decoded from base64 as UTF-8, and its annotations. */
export interface FoundSecret {
  readonly kind: 'found';
  readonly data: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * A Secret read with `client`, which is the ApplySet's account (impersonated) wherever the Secret is
 * one an ApplySet names (Git credentials, decryption keys, a remote kubeconfig, a notification's
 * endpoint): `forbidden` when that account may not get it, `missing` when there is none.
 */
export async function readSecret(
  client: KubeClient,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<FoundSecret | { readonly kind: 'missing' } | { readonly kind: 'forbidden' }> {
  const read = await readAsAccount(client, secretPath(namespace, name), signal);
  if (read.kind !== 'read') return read;
  const secret = read.object;
  const metadata = isJsonObject(secret) && isJsonObject(secret['metadata']) ? secret['metadata'] : {};
  return {
    kind: 'found',
    data: stringsOf(isJsonObject(secret) ? secret['data'] : undefined, (value) =>
      Buffer.from(value, 'base64').toString('utf8'),
    ),
    annotations: stringsOf(metadata['annotations'], (value) => value),
  };
}

function stringsOf(map: JsonValue | undefined, decode: (value: string) => string): Record<string, string> {
  if (!isJsonObject(map)) return {};
  return Object.fromEntries(
    Object.entries(map).flatMap(([key, value]) => (typeof value === 'string' ? [[key, decode(value)]] : [])),
  );
}

/** A ConfigMap that was read: its `data` (binaryData is not read). */
export interface FoundConfigMap {
  readonly kind: 'found';
  readonly data: Readonly<Record<string, string>>;
}

/**
 * A ConfigMap an ApplySet names (spec.helm.valuesFrom), read with `client`, the ApplySet's account,
 * as readSecret reads a Secret: `forbidden` when that account may not get it, `missing` when there is none.
 */
export async function readConfigMap(
  client: KubeClient,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<FoundConfigMap | { readonly kind: 'missing' } | { readonly kind: 'forbidden' }> {
  const at = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`;
  const read = await readAsAccount(client, at, signal);
  if (read.kind !== 'read') return read;
  const configMap = read.object;
  return {
    kind: 'found',
    data: stringsOf(isJsonObject(configMap) ? configMap['data'] : undefined, (value) => value),
  };
}

/** GET of an object an ApplySet names, as its account: `missing` (404) and `forbidden` (403) said, not thrown. */
async function readAsAccount(
  client: KubeClient,
  at: string,
  signal: AbortSignal,
): Promise<
  { readonly kind: 'read'; readonly object: JsonValue } | { readonly kind: 'missing' | 'forbidden' }
> {
  try {
    return { kind: 'read', object: await client.request({ method: 'GET', path: at, signal }) };
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound) return { kind: 'missing' };
    if (error instanceof KubeApiError && error.status === 403) return { kind: 'forbidden' };
    throw error;
  }
}

function resourceVersionOf(object: JsonValue): string | undefined {
  const metadata = isJsonObject(object) ? object['metadata'] : undefined;
  const version = isJsonObject(metadata) ? metadata['resourceVersion'] : undefined;
  return typeof version === 'string' ? version : undefined;
}

/**
 * The ApplySet as the engine's parent: it always exists, so it is never created. `applySet` is the
 * object this reconcile started from (its GET, the informer's whole copy at the version last answered
 * to the controller, or the PATCH that re-added the finalizer), which the engine takes rather than GET
 * it again: at most one read of the ApplySet per reconcile. Never an informer copy that lacks the
 * inventory annotations (isWholeView).
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
