import { IntentError } from '../errors/intent-error.js';

/**
 * Why a Kustomize build gave no manifests:
 * - `refused`: the kustomization asks for something the controller never does (a remote base, a
 *   plugin, a path leaving the repository), found before kustomize ran;
 * - `failed`: kustomize ran and refused the input, or went over its time or memory limit; the same
 *   commit would fail the same way, so only a change of the repository helps;
 * - `internal`: kustomize could not be run at all (the binary is missing or would not start), which is
 *   the controller's installation, not the repository.
 */
export type KustomizeFailure = 'refused' | 'failed' | 'internal';

const REASONS: Readonly<Record<KustomizeFailure, string>> = {
  refused: 'KustomizationRefused',
  failed: 'KustomizeBuildFailed',
  internal: 'KustomizeUnavailable',
};

/** A Kustomize build that gave no manifests; the message names the kustomization and what to fix. */
export class KustomizeError extends IntentError {
  override readonly name = 'KustomizeError';
  readonly code = 'KUSTOMIZE_ERROR';
  readonly reason: string;
  readonly intent: 'stalled' | 'retryable';
  constructor(
    readonly failure: KustomizeFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.reason = REASONS[failure];
    // An installation problem may be fixed under the running controller (a volume mounted late); a
    // refused or failing kustomization stays so until its commit changes.
    this.intent = failure === 'internal' ? 'retryable' : 'stalled';
  }
}
