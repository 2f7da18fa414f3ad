import type { GitAuth } from '../git/git-source.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject } from '../manifests/json-value.js';
import {
  APPLYSET_GROUP,
  APPLYSET_PLURAL,
  APPLYSET_VERSION,
  type ApplySet,
  type ApplySetStatus,
} from './applyset-types.js';

export type GitAuthRead =
  | { readonly kind: 'found'; readonly auth: GitAuth }
  | { readonly kind: 'missing'; readonly problem: string };

/** The few calls the reconciler makes as the controller itself. */
export interface ApplySetApi {
  get(namespace: string, name: string, signal: AbortSignal): Promise<ApplySet | undefined>;
  /** Replaces metadata.finalizers, guarded by the resourceVersion read. */
  setFinalizers(applySet: ApplySet, finalizers: readonly string[], signal: AbortSignal): Promise<void>;
  /** Writes the whole status through the status subresource. */
  writeStatus(applySet: ApplySet, status: ApplySetStatus, signal: AbortSignal): Promise<void>;
  readGitAuth(namespace: string, secretName: string, signal: AbortSignal): Promise<GitAuthRead>;
}

export function applySetPath(namespace: string, name?: string): string {
  const collection = `/apis/${APPLYSET_GROUP}/${APPLYSET_VERSION}/namespaces/${encodeURIComponent(namespace)}/${APPLYSET_PLURAL}`;
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`;
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
      await client.request({
        method: 'PATCH',
        path: applySetPath(namespace, name),
        contentType: 'application/merge-patch+json',
        // The resourceVersion makes this a compare-and-swap: a 409 retries with a fresh read.
        body: JSON.stringify({ metadata: { finalizers, resourceVersion } }),
        signal,
      });
    },
    async writeStatus(applySet, status, signal) {
      const { namespace, name } = applySet.metadata;
      try {
        await client.request({
          method: 'PATCH',
          path: `${applySetPath(namespace, name)}/status`,
          contentType: 'application/merge-patch+json',
          body: JSON.stringify({ status }),
          signal,
        });
      } catch (error) {
        // Deleted while we reconciled: there is no status left to write.
        if (error instanceof KubeApiError && error.notFound) return;
        throw error;
      }
    },
    async readGitAuth(namespace, secretName, signal) {
      let secret;
      try {
        secret = await client.request({
          method: 'GET',
          path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(secretName)}`,
          signal,
        });
      } catch (error) {
        if (error instanceof KubeApiError && error.notFound)
          return { kind: 'missing', problem: 'does not exist' };
        throw error;
      }
      const data = isJsonObject(secret) && isJsonObject(secret['data']) ? secret['data'] : {};
      const field = (key: string) =>
        typeof data[key] === 'string' ? Buffer.from(data[key], 'base64').toString('utf8') : undefined;
      const token = field('token');
      if (token !== undefined && token !== '') return { kind: 'found', auth: { token } };
      const username = field('username');
      const password = field('password');
      if (username !== undefined && password !== undefined) {
        return { kind: 'found', auth: { username, password } };
      }
      return { kind: 'missing', problem: 'has neither token nor username and password' };
    },
  };
}
