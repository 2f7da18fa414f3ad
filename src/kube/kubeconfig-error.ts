/** The error of a kubeconfig that cannot be used; loadKubeConfig re-exports it. */
import { IntentError } from '../errors/intent-error.js';

/**
 * The kubeconfig could not be read or names no cluster, or a credential it names cannot be had (an
 * exec plugin that fails). Stalled: the user must fix the flag or file. In a reconcile, it is the
 * requests of the apply that failed, so it is reported as `ApplyFailed`.
 */
export class KubeConfigError extends IntentError {
  override readonly name: string = 'KubeConfigError';
  readonly code = 'KUBECONFIG_INVALID';
  readonly intent = 'stalled';
  readonly reason = 'ApplyFailed';
}
