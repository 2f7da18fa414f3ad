import type { ApplySetApi } from '../../kube/applyset-api.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { startSupervisedInformer } from '../../kube/supervised-informer.js';
import type { InformerLogger } from '../../kube/watch-once.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import type { ControllerConfig } from './controller-config.js';

/**
 * The ApplySet calls with step 7's question (does the account to impersonate exist?) answered from a
 * watch of ServiceAccounts rather than a GET per reconcile (issue #39: at rest, one request per object
 * plus one). The watch holds the names only, one LIST and one WATCH for the controller's life.
 *
 * Only "it exists" is taken from the watch: an account the watch has not seen (not synced yet, created
 * a moment ago, or no right to list ServiceAccounts, which reads as none) is asked of the API server
 * as before, so an ApplySet never stalls on the watch's lag. A deleted account is seen as deleted as
 * soon as the watch delivers the deletion; a watch that stops delivering is abandoned and restarted
 * after the informer's stall timeout (3 minutes), the bound on how stale "it exists" can be.
 */
export function withWatchedAccounts(
  api: ApplySetApi,
  options: {
    readonly client: KubeClient;
    readonly config: Pick<ControllerConfig, 'namespace' | 'watchStallTimeoutMs'>;
    readonly logger: InformerLogger;
    readonly signal: AbortSignal;
  },
): ApplySetApi {
  const { namespace, watchStallTimeoutMs } = options.config;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  const accounts = startSupervisedInformer({
    client: options.client,
    path: `/api/v1${scope}/serviceaccounts`,
    // A controller granted only `get` on ServiceAccounts (an older chart) reads every account by GET.
    missingAsEmpty: true,
    transform: nameOnly,
    logger: options.logger,
    signal: options.signal,
    ...(watchStallTimeoutMs === undefined ? {} : { stallTimeoutMs: watchStallTimeoutMs }),
    onEvent: () => undefined,
  });
  return {
    ...api,
    serviceAccountExists: async (accountNamespace, name, signal) =>
      (accounts.hasSynced() && accounts.get(`${accountNamespace}/${name}`) !== undefined) ||
      api.serviceAccountExists(accountNamespace, name, signal),
  };
}

/** What the watch keeps of a ServiceAccount: its identity, not its Secrets or image pull secrets. */
function nameOnly(object: JsonObject): JsonObject {
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  const kept: JsonObject = {};
  for (const key of ['name', 'namespace', 'uid', 'resourceVersion']) {
    const value = metadata[key];
    if (value !== undefined) kept[key] = value;
  }
  return { metadata: kept };
}
