import type { ApplySet } from '../../api/applyset-types.js';
import { createApplySetApi, type ApplySetApi } from '../../kube/applyset-api.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { resourceVersionOf } from '../../kube/informer-cache.js';
import type { SupervisedInformer } from '../../kube/supervised-informer.js';
import { cloneJson } from '../../merge/go-value.js';
import type { Logger } from '../../observability/create-logger.js';
import type { ControllerConfig } from './controller-config.js';
import { isWholeView } from './informer-view.js';
import { withWatchedAccounts } from './watched-accounts.js';

/** The ApplySet calls, with step 1's read taken from the informer when it may be (withInformedReads). */
export interface InformedApplySetApi extends ApplySetApi {
  /** The ApplySet is gone: what was last answered of it is forgotten. */
  forget(key: string): void;
  /** The informer whose copies step 1 may read from; until it is given, every read is a GET. */
  readFrom(informer: Pick<SupervisedInformer, 'get' | 'isWatching'>): void;
}

/** Read or written here without a version answered: never equal to a resourceVersion. */
const UNKNOWN = '';

/**
 * Step 1's read of the ApplySet answered from the informer's copy rather than a GET (issue #39: at rest,
 * one request per object, the ApplySet's GET was one more), when the copy is safe to start from:
 *
 * - it is whole (isWholeView: a set of a few dozen objects; a larger one's inventory is not cached);
 * - it is at the resourceVersion this controller last had from the API server itself (its own GET, or the
 *   answer to its own write of the ApplySet). So no one else wrote the ApplySet since, as far as the watch
 *   has told, and the watch has caught up with our last write: a reconcile right after a status write
 *   does not start from the version before it. Any other version (a user's edit, a deletion begun, a
 *   write of the engine's not answered here) is read by GET;
 * - or this controller has neither read nor written the ApplySet since it started (a new ApplySet, or
 *   every one after a restart): the copy is then what the informer's LIST or watch answered, as recent
 *   as anything this process knows of it. Its version counts as answered from then on, so a write the run
 *   makes without an answer here (the engine's inventory patches) sends the next read to a GET. A write
 *   whose answer was lost, or a GET that found nothing, is not "never read": those read by GET until a
 *   version is answered (or the set's deletion is seen and it is forgotten);
 * - the informer's watch is open (isWatching): while the API server is away or starting, the GET is what
 *   ends the run before it judges anything, as it did before (no failure written for an outage).
 *
 * A write the watch has not delivered yet is what any informer-fed controller may miss: every write of
 * the run is conditional on the resourceVersion it started from, so a stale start ends in a conflict and
 * a new read, not a lost change (docs/error-intents.md).
 *
 * @internal Its tests script the API server's answers under it; the controller takes it through
 * reconcilerApplySetApi.
 */
export function withInformedReads(api: ApplySetApi): InformedApplySetApi {
  let informer: Pick<SupervisedInformer, 'get' | 'isWatching'> | undefined;
  /**
   * By `namespace/name`: the resourceVersion of the ApplySet as the API server last answered us, or
   * UNKNOWN when we have read or written it without an answer to start from. No entry: never read.
   */
  const answered = new Map<string, string>();
  const remember = (key: string, version: string | undefined): void => {
    answered.set(key, version ?? UNKNOWN);
  };
  const keyOf = (applySet: ApplySet): string => `${applySet.metadata.namespace}/${applySet.metadata.name}`;
  const note = (applySet: ApplySet): ApplySet => {
    remember(keyOf(applySet), applySet.metadata.resourceVersion);
    return applySet;
  };
  return {
    ...api,
    async get(namespace, name, signal) {
      const key = `${namespace}/${name}`;
      const copy = informer?.isWatching() === true ? informer.get(key) : undefined;
      const version = answered.get(key);
      const copyVersion = copy !== undefined && isWholeView(copy) ? resourceVersionOf(copy) : undefined;
      // A set never read here starts from its copy, whose version then counts as answered.
      if (copy !== undefined && copyVersion !== undefined && (version ?? copyVersion) === copyVersion) {
        remember(key, copyVersion);
        return cloneJson(copy) as unknown as ApplySet;
      }
      const read = await api.get(namespace, name, signal);
      remember(key, read?.metadata.resourceVersion);
      return read;
    },
    setFinalizers: async (applySet, finalizers, signal) =>
      note(await api.setFinalizers(applySet, finalizers, signal)),
    setAnnotation: async (applySet, key, value, signal) =>
      note(await api.setAnnotation(applySet, key, value, signal)),
    async writeStatus(applySet, status, resourceVersion, signal) {
      const written = await api.writeStatus(applySet, status, resourceVersion, signal);
      remember(keyOf(applySet), written.kind === 'written' ? written.resourceVersion : undefined);
      return written;
    },
    forget: (key) => answered.delete(key),
    readFrom: (watched) => {
      informer = watched;
    },
  };
}

/**
 * The reconciler's calls on ApplySets: step 1 reads a small ApplySet from the informer
 * (withInformedReads), step 7's account comes from a watch of ServiceAccounts (withWatchedAccounts):
 * at rest, no GET of either.
 */
export function reconcilerApplySetApi(options: {
  readonly client: KubeClient;
  readonly config: Pick<ControllerConfig, 'namespace' | 'watchStallTimeoutMs'>;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}): InformedApplySetApi {
  const { client, config, logger, signal } = options;
  const accounts = { client, config, logger: logger.child({ informer: 'serviceaccounts' }), signal };
  return withInformedReads(withWatchedAccounts(createApplySetApi(client), accounts));
}
