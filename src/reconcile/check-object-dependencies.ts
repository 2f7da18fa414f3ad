/**
 * The shell of the objects of spec.dependsOn that are not ApplySets: each kind mapped to its resource
 * by the controller's one discovery mapper (discovery answers every account alike), each object read
 * as the ApplySet's account, as its Git credentials Secret is (so a tenant learns the state of nothing
 * its account may not get), then objectDependencyOutcome (src/api/object-dependencies.ts) decides.
 * There is no watch on an arbitrary object: a waiting run looks again after spec.retryInterval.
 */
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { ObjectDependency } from '../api/dependency-types.js';
import {
  crossNamespaceObjectOutcome,
  objectDependencyOutcome,
  type ObjectDependencyRead,
  type PlacedObjectDependency,
} from '../api/object-dependencies.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { messageOf } from '../errors/message-of.js';
import { ImpersonationRefusedError, KubeApiError, UnknownKindError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { createKubeObjectApi } from '../kube/kube-object-api.js';
import type { RestMapper } from '../kube/rest-mapper.js';

export interface ObjectDependencyAccount {
  /** Reads as the ApplySet's account (options.readerAs(user)). */
  readonly reader: KubeClient;
  readonly user: string | undefined;
  /** The ApplySet's namespace: an entry without one names an object there. */
  readonly namespace: string;
}

/** Undefined when every object dependency is Current (or there is none); otherwise the outcome that ends the run. */
export async function checkObjectDependencies(
  mapper: RestMapper,
  account: ObjectDependencyAccount,
  spec: Pick<ResolvedApplySetSpec, 'dependsOnObjects' | 'retryIntervalMs'>,
  options: { readonly noCrossNamespaceRefs: boolean; readonly signal: AbortSignal },
): Promise<ReconcileOutcome | undefined> {
  if (spec.dependsOnObjects.length === 0) return undefined;
  const { signal } = options;
  const run = mapper.forRun();
  const mapped = await Promise.all(
    spec.dependsOnObjects.map((d) => place(run, d, account.namespace, signal)),
  );
  // A kind discovery does not know is not read, so its namespace refuses nothing yet.
  const placed = mapped.flatMap((m) => ('read' in m ? [] : [m.placed]));
  const refused = crossNamespaceObjectOutcome(placed, account.namespace, options.noCrossNamespaceRefs);
  if (refused !== undefined) return refused;
  const api = createKubeObjectApi(account.reader);
  const reads = await Promise.all(
    mapped.map(async (m) =>
      'read' in m ? m : { placed: m.placed, read: await readAs(api, m.placed, signal) },
    ),
  );
  return objectDependencyOutcome({ reads, user: account.user, retryIntervalMs: spec.retryIntervalMs });
}

type Mapped =
  | { readonly placed: PlacedObjectDependency }
  | { readonly placed: PlacedObjectDependency; readonly read: ObjectDependencyRead };

/** Its resource and namespace; a kind discovery does not know is read as such (a CRD not installed yet). */
async function place(
  mapper: RestMapper,
  dependency: ObjectDependency,
  own: string,
  signal: AbortSignal,
): Promise<Mapped> {
  const slash = dependency.apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : dependency.apiVersion.slice(0, slash);
  const version = dependency.apiVersion.slice(slash + 1);
  try {
    const mapping = await mapper.resolve({ group, version, kind: dependency.kind }, signal);
    // A cluster-scoped kind has no namespace, whatever the entry says.
    const namespace = mapping.scope === 'Namespaced' ? (dependency.namespace ?? own) : '';
    return { placed: { dependency, group, resource: mapping.resource, namespace } };
  } catch (error) {
    if (signal.aborted || !(error instanceof UnknownKindError)) throw error;
    const placed = { dependency, group, resource: '', namespace: dependency.namespace ?? own };
    return { placed, read: { kind: 'unknownKind', message: error.message } };
  }
}

async function readAs(
  api: ReturnType<typeof createKubeObjectApi>,
  placed: PlacedObjectDependency,
  signal: AbortSignal,
): Promise<ObjectDependencyRead> {
  const [version = ''] = placed.dependency.apiVersion.split('/').slice(-1);
  const location = { group: placed.group, version, resource: placed.resource, namespace: placed.namespace };
  try {
    const object = await api.get(location, placed.dependency.name, signal);
    return object === undefined ? { kind: 'missing' } : { kind: 'found', object };
  } catch (error) {
    if (signal.aborted) throw error;
    // Refused impersonation is the controller's own RBAC, not the account's: not its grant to name.
    if (
      error instanceof KubeApiError &&
      error.status === 403 &&
      !(error instanceof ImpersonationRefusedError)
    )
      return { kind: 'forbidden' };
    return { kind: 'unreadable', message: messageOf(error) };
  }
}
