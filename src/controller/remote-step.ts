/**
 * spec.kubeConfig (step 9 of reconcile-applyset.ts): the cluster the set is applied to when it is not
 * the controller's. The kubeconfig Secret is read as the account the set is applied as, as the Git
 * credentials are (readCredentials): an ApplySet author cannot have the controller use a kubeconfig
 * their account may not read. Ends the run with an outcome, or hands over the cluster; never throws
 * but an abort.
 */
import type { RemoteKubeConfigRef } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { classifyFailure } from '../errors/classify-failure.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../observability/create-logger.js';
import type { Step } from '../api/reconcile-outcome.js';
import { readSetSecret } from '../source/set-secret.js';
import type { RemoteCluster, RemoteClusters } from './runtime/remote-clusters.js';

/** How long a reconcile waits for a remote cluster's first answer before it backs off. */
const REMOTE_PROBE_TIMEOUT_MS = 10_000;

/** The keys a kubeconfig is looked for under when secretRef.key is not given, in order (Flux's). */
const DEFAULT_KEYS = ['value', 'value.yaml'] as const;

/** The remote cluster of `ref`, reachable; or the outcome that ends the run (stalled, or retried). */
export async function remoteClusterOf(
  reader: KubeClient,
  remoteClusters: RemoteClusters | undefined,
  { user, namespace }: { user: string | undefined; namespace: string },
  ref: RemoteKubeConfigRef,
  { signal, log }: { signal: AbortSignal; log: Pick<Logger, 'error'> },
): Promise<Step<RemoteCluster>> {
  const read = await readKubeConfigText(reader, { user, namespace }, ref, signal);
  if ('done' in read) return read;
  const { text, from } = read.value;
  if (remoteClusters === undefined) {
    return stalled('KubeConfigRefused', `spec.kubeConfig: this controller applies to its own cluster only`);
  }
  try {
    const cluster = remoteClusters(text, from);
    await cluster.reachable(REMOTE_PROBE_TIMEOUT_MS, signal);
    return { value: cluster };
  } catch (error) {
    rethrowAbort(error);
    return { done: outcomeOf(error, log) };
  }
}

/** The kubeconfig text of the Secret, read as `user`, and how messages name where it came from. */
async function readKubeConfigText(
  reader: KubeClient,
  { user, namespace }: { user: string | undefined; namespace: string },
  ref: RemoteKubeConfigRef,
  signal: AbortSignal,
): Promise<Step<{ text: string; from: string }>> {
  const { secretName } = ref;
  const read = await readSetSecret(
    { reader, user, namespace },
    secretName,
    'spec.kubeConfig.secretRef',
    signal,
  );
  if ('done' in read) return read;
  const { data } = read.value;
  const keys = ref.key === undefined ? DEFAULT_KEYS : [ref.key];
  const key = keys.find((candidate) => data[candidate] !== undefined);
  if (key === undefined) {
    return stalled(
      'SecretNotFound',
      `Secret ${namespace}/${secretName} (spec.kubeConfig.secretRef) has no key ${keys.join(' nor ')}; nothing was applied`,
    );
  }
  const text = data[key] ?? '';
  return { value: { text, from: `Secret ${namespace}/${secretName}, key ${key}` } };
}

function stalled(reason: string, message: string): { done: ReconcileOutcome } {
  return { done: { kind: 'stalled', reason, message } };
}

/** A refused kubeconfig stalls; an unreachable cluster is retried; anything else is classified. */
function outcomeOf(error: unknown, log: Pick<Logger, 'error'>): ReconcileOutcome {
  const failure = classifyFailure(error);
  if (failure.unexpected)
    log.error({ err: error }, `unexpected error reaching the remote cluster, a bug: ${failure.message}`);
  const { reason, message } = failure;
  return failure.intent === 'waiting'
    ? { kind: 'waiting', reason, message, afterMs: failure.afterMs }
    : { kind: failure.intent, reason, message };
}

/**
 * The engine's outcome on a remote cluster: a refused impersonation there is the kubeconfig's
 * identity lacking `impersonate` on the remote cluster, not the controller's RBAC here, and the
 * message says so.
 */
export function remoteEngineOutcome<T extends { readonly outcome: ReconcileOutcome }>(
  run: T,
  server: string,
  { namespace, serviceAccount }: { namespace: string; serviceAccount: string | undefined },
): T {
  const { outcome } = run;
  if (outcome.kind !== 'stalled' || outcome.reason !== 'ImpersonationForbidden') return run;
  const message = `the kubeconfig's identity may not impersonate ServiceAccount ${namespace}/${serviceAccount ?? ''} on remote cluster ${server}; nothing was applied. Grant it impersonate on that user there (docs/remote-clusters.md)`;
  return { ...run, outcome: { ...outcome, message } };
}
