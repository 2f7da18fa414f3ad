/**
 * The apply engines of the controller, one per identity it acts as, sharing everything an engine
 * would otherwise keep for itself (issue #14: 1,000 tenants, each with a ServiceAccount of its own).
 */
import type { ApplySetEngine } from '../../apply/apply-set-contract.js';
import { createApplySetEngine } from '../../apply/create-apply-set-engine.js';
import { createNoOpMemo, noOpMemoFor } from '../../apply/remember-no-op.js';
import type { ApplySetEngineOptions } from '../../apply/run-context.js';
import { createKubeClient, type KubeClient } from '../../kube/kube-client.js';
import type { KubeConnection } from '../../kube/kube-connection.js';
import { createOpenApiPatchMetaSource } from '../../kube/openapi-patch-meta-source.js';
import { createRestMapper } from '../../kube/rest-mapper.js';
import type { Logger } from '../../observability/create-logger.js';

interface SharedEnginesOptions {
  /** The connection every identity's requests share (sockets, TLS), over the controller's credentials. */
  readonly connection: KubeConnection;
  readonly logger: Logger;
  readonly countRequest: (method: string, path: string) => void;
  /** The leader fence every write of every identity passes. */
  readonly writeFence?: () => void;
  readonly hooks?: EngineHooks;
  /**
   * The client the ApplySet (the parent) is read and written with; default one on `connection`. For a
   * remote cluster the children are on its connection while the ApplySet stays on the controller's.
   */
  readonly parentClient?: KubeClient;
}

/**
 * What a test entry point may hang on every engine the controller makes, never set by a flag or by
 * ControllerConfig: the split-brain fault test pauses the process after a plan step (SIGSTOP) to play a
 * leader frozen mid-reconcile.
 */
export interface EngineHooks {
  readonly afterStep?: ApplySetEngineOptions['afterStep'];
}

/**
 * Engines for any number of identities at the cost of one (issue #14: 1,000 tenants, each with a
 * ServiceAccount of its own). Everything an engine would keep is shared by all, read as the
 * controller and bounded: one connection (sockets, TLS), one discovery mapper and one OpenAPI source
 * (their answers are the same for every user, see createRestMapper), one memo of ignored patches
 * (scoped by identity, least recently used dropped). An identity's engine is made per reconcile and
 * dropped after it, so there is no table of identities to grow or to evict.
 */
export function sharedEngines(options: SharedEnginesOptions): (user: string | undefined) => ApplySetEngine {
  const { connection, logger, countRequest, writeFence } = options;
  const afterStep = options.hooks?.afterStep;
  const fenced = writeFence === undefined ? {} : { writeFence };
  // Discovery and OpenAPI only read: as the controller itself, unfenced.
  const reader = createKubeClient({ connection, onRequest: countRequest });
  // The parent, the ApplySet, is read and written as the controller (fenced like every write), never
  // as the account: an account with rights on ApplySets could rewrite its siblings (issue #23).
  const parentClient =
    options.parentClient ?? createKubeClient({ connection, onRequest: countRequest, ...fenced });
  const restMapper = createRestMapper(reader);
  const patchMetaSource = createOpenApiPatchMetaSource({
    client: reader,
    onFetchError: (path, error) =>
      logger.warn({ path, err: error }, 'OpenAPI not readable; using the built-in patch metadata'),
  });
  const noOps = createNoOpMemo();
  return (user) => {
    const identity = user ?? '';
    return createApplySetEngine({
      kubeClient: createKubeClient({
        connection,
        onRequest: countRequest,
        ...(user === undefined ? {} : { impersonateUser: user }),
        ...fenced,
      }),
      parentKubeClient: parentClient,
      logger: logger.child({ engine: identity === '' ? 'controller' : identity }),
      restMapper,
      patchMetaSource,
      serverNoOps: noOpMemoFor(noOps, identity),
      ...(afterStep === undefined ? {} : { afterStep }),
    });
  };
}
