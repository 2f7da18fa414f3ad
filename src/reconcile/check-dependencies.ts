/**
 * The shell of spec.dependsOn: reads the ApplySets a reconcile depends on, and theirs in turn (to find
 * a cycle), then lets dependencyOutcome (src/api/dependencies.ts) decide whether the run goes on.
 * Reads go to the API server, not the informer: a dependency may live outside what this controller
 * watches (another namespace than --namespace, another shard), and its newest status is what counts.
 */

import type { ApplySet, ResolvedApplySetSpec } from '../api/applyset-types.js';
import {
  dependencyKey,
  dependencyKeysOf,
  dependencyOutcome,
  notReadyDependencies,
  type DependencyRead,
  type DependencyWait,
} from '../api/dependencies.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { messageOf } from '../errors/message-of.js';
import type { ApplySetApi } from '../kube/applyset-api.js';

/** The most ApplySets one check reads: a bound on the walk of a very large dependency graph. */
const MAX_DEPENDENCY_READS = 100;

/** Undefined when the run may go on; otherwise the outcome that ends it before anything is fetched. */
export async function checkDependencies(
  api: ApplySetApi,
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  options: { readonly noCrossNamespaceRefs: boolean; readonly signal: AbortSignal },
): Promise<ReconcileOutcome | undefined> {
  return (await dependencyCheck(api, applySet, spec, options)).outcome;
}

/**
 * checkDependencies with the dependencies not Ready named one by one: the preview shows which it
 * would wait for, from the same reads the outcome was decided on.
 */
export async function dependencyCheck(
  api: ApplySetApi,
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  options: { readonly noCrossNamespaceRefs: boolean; readonly signal: AbortSignal },
): Promise<{ readonly outcome: ReconcileOutcome | undefined; readonly waitingFor: DependencyWait[] }> {
  if (spec.dependsOn.length === 0) return { outcome: undefined, waitingFor: [] };
  const reads = await readDependencyGraph(api, applySet, spec, options);
  const outcome = dependencyOutcome({
    applySet,
    dependsOn: spec.dependsOn,
    noCrossNamespaceRefs: options.noCrossNamespaceRefs,
    reads,
    safetyRequeueMs: spec.intervalMs,
  });
  // A refusal or a cycle waits for nothing: it stalls until the spec changes.
  if (outcome === undefined || outcome.kind === 'applied' || outcome.reason !== 'DependencyNotReady')
    return { outcome, waitingFor: [] };
  const keys = spec.dependsOn.map((reference) => dependencyKey(reference, applySet.metadata.namespace));
  return { outcome, waitingFor: notReadyDependencies(keys, reads) };
}

/**
 * Breadth first from the ApplySet's own dependencies. Under --no-cross-namespace-refs nothing of
 * another namespace is read at all: its status is not this tenant's to learn.
 */
async function readDependencyGraph(
  api: ApplySetApi,
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  options: { readonly noCrossNamespaceRefs: boolean; readonly signal: AbortSignal },
): Promise<Map<string, DependencyRead>> {
  const { namespace, name } = applySet.metadata;
  const self = `${namespace}/${name}`;
  const reads = new Map<string, DependencyRead>();
  const queue = spec.dependsOn.map((reference) => dependencyKey(reference, namespace));
  for (let next = 0; next < queue.length && reads.size < MAX_DEPENDENCY_READS; next += 1) {
    const key = queue[next] as string;
    const [keyNamespace = '', keyName = ''] = key.split('/');
    if (key === self || reads.has(key)) continue;
    if (options.noCrossNamespaceRefs && keyNamespace !== namespace) continue;
    const read = await readApplySet(api, keyNamespace, keyName, options.signal);
    reads.set(key, read);
    if (read.kind === 'found') queue.push(...dependencyKeysOf(read.applySet));
  }
  return reads;
}

async function readApplySet(
  api: ApplySetApi,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<DependencyRead> {
  try {
    const applySet = await api.get(namespace, name, signal);
    return applySet === undefined ? { kind: 'missing' } : { kind: 'found', applySet };
  } catch (error) {
    if (signal.aborted) throw error;
    return { kind: 'unreadable', message: messageOf(error) };
  }
}
