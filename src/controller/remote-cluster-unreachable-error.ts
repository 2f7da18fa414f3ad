import { IntentError } from '../errors/intent-error.js';
import { messageOf } from '../errors/message-of.js';

/**
 * The remote cluster of spec.kubeConfig did not answer in time: only its ApplySets wait, retried with
 * backoff; the message names the server so the operator knows which cluster is down.
 */
export class RemoteClusterUnreachableError extends IntentError {
  override readonly name = 'RemoteClusterUnreachableError';
  readonly code = 'REMOTE_CLUSTER_UNREACHABLE';
  readonly intent = 'retryable';
  readonly reason = 'RemoteClusterUnreachable';
  constructor(
    readonly server: string,
    /** Where the kubeconfig came from: `Secret team-a/cluster-b, key value`. */
    from: string,
    options: { cause: unknown },
  ) {
    super(
      `remote cluster ${server} (the kubeconfig of ${from}) is unreachable: ${messageOf(options.cause)}; nothing was applied, retrying with backoff`,
      options,
    );
  }
}
