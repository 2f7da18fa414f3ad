import { KubeApiError } from '../../kube/kube-api-error.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { repositoryIdentity, type PushEvent } from '../../http/push-event.js';
import { startWebhookServer, type WebhookServer } from '../../http/start-webhook-server.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import type { Logger } from '../../observability/create-logger.js';
import { applySetPath } from '../../kube/applyset-api.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../../api/applyset-types.js';
import { lenientApplySetSpec } from '../../api/resolve-applyset-spec.js';
import { registryPushTargets } from './registry-push-targets.js';

interface PushWebhookOptions {
  /** `:9292`. */
  readonly address: string;
  /** `namespace/name` of the Secret whose keys are receiver names and values their secrets. */
  readonly secret: string;
  /** Unfenced: any replica may record a request; only the leader acts on it. */
  readonly client: KubeClient;
  readonly applySets: () => readonly JsonObject[];
  readonly now: () => Date;
  readonly logger: Logger;
}

const SECRET_CACHE_MS = 10_000;

/**
 * The push webhook of the controller: a push that names an ApplySet's repository and ref (a forge's
 * push of a branch or tag, or a registry's push of a tagged manifest) sets the
 * ApplySet's reconcile-requested-at annotation, as `applyset reconcile` does. The request is kept on
 * the cluster, so whichever replica the Service sent the hook to, the leader sees it; and a requested
 * reconcile fetches its source again rather than taking a recent fetch.
 */
export async function servePushWebhook(options: PushWebhookOptions): Promise<WebhookServer> {
  const [namespace = '', name = ''] = options.secret.split('/');
  let cached: { at: number; data: JsonObject | undefined } | undefined;
  const receivers = async (): Promise<JsonObject | undefined> => {
    if (cached !== undefined && Date.now() - cached.at < SECRET_CACHE_MS) return cached.data;
    let data: JsonObject | undefined;
    try {
      const secret = await options.client.request({
        method: 'GET',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
      });
      data = isJsonObject(secret) && isJsonObject(secret['data']) ? secret['data'] : undefined;
    } catch (error) {
      if (!(error instanceof KubeApiError && error.notFound)) throw error;
      options.logger.warn({ secret: options.secret }, 'webhook: the receivers Secret does not exist');
    }
    cached = { at: Date.now(), data };
    return data;
  };
  return startWebhookServer({
    address: options.address,
    logger: options.logger,
    secretFor: async (receiver) => {
      const value = (await receivers())?.[receiver];
      return typeof value === 'string' && value !== ''
        ? Buffer.from(value, 'base64').toString('utf8')
        : undefined;
    },
    onPush: (push) => requestReconciles(options, pushTargets(options.applySets(), push)),
    onRegistryPush: (pushes) => requestReconciles(options, registryPushTargets(options.applySets(), pushes)),
  });
}

/** Sets the reconcile-requested-at annotation of each ApplySet (`namespace/name`); resolves with how many. */
async function requestReconciles(options: PushWebhookOptions, keys: readonly string[]): Promise<number> {
  const requested = options.now().toISOString();
  let requestedOf = 0;
  for (const key of keys) {
    const [namespace = '', name = ''] = key.split('/');
    try {
      await options.client.request({
        method: 'PATCH',
        path: applySetPath(namespace, name),
        contentType: 'application/merge-patch+json',
        body: JSON.stringify({
          metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: requested } },
        }),
      });
      requestedOf += 1;
    } catch (error) {
      // Deleted since the informer listed it: nothing to reconcile. Anything else is the sender's 500,
      // and a registry sends the envelope again.
      if (!(error instanceof KubeApiError && error.notFound)) throw error;
    }
  }
  return requestedOf;
}

/**
 * The ApplySets a push concerns, as `namespace/name`: those whose spec.source.url names the pushed
 * repository (by any of the URLs the payload gives; scheme, credentials and a `.git` suffix aside)
 * and whose ref is the pushed branch or tag. A set pinned to a commit is never concerned; a suspended
 * one is left alone, and so is an OCI source (registryPushTargets).
 */
function pushTargets(applySets: readonly JsonObject[], push: PushEvent): string[] {
  const pushed = new Set(push.repositoryUrls.map(repositoryIdentity).filter((id) => id !== undefined));
  const keys: string[] = [];
  for (const applySet of applySets) {
    const metadata = isJsonObject(applySet['metadata']) ? applySet['metadata'] : {};
    const { suspend, url, ref } = lenientApplySetSpec(applySet['spec']);
    if (suspend || url === undefined || url.startsWith('oci://') || ref === undefined) continue;
    const identity = repositoryIdentity(url);
    if (identity === undefined || !pushed.has(identity)) continue;
    const matches =
      (ref.type === 'branch' && ref.name === push.branch) || (ref.type === 'tag' && ref.name === push.tag);
    if (matches) keys.push(`${String(metadata['namespace'] ?? '')}/${String(metadata['name'] ?? '')}`);
  }
  return keys.sort();
}
