import { IntentError } from '../errors/intent-error.js';

/**
 * Why a chart gave no manifests:
 * - `refused`: the source is not what spec.helm asks for (no Chart.yaml, a values file missing or
 *   sops-encrypted without spec.decryption), found before helm ran;
 * - `failed`: `helm template` ran and refused the chart, or went over its time, memory or output
 *   limit; the same revision would fail the same way, so only a change of the source or spec helps;
 * - `internal`: helm could not be run at all (the binary is missing), the controller's installation;
 * - `capabilities`: the target cluster's discovery could not be read for `.Capabilities` (it may answer
 *   on the next try).
 */
type HelmFailure = 'refused' | 'failed' | 'internal' | 'capabilities';

const REASONS: Readonly<Record<HelmFailure, string>> = {
  refused: 'HelmChartRefused',
  failed: 'HelmTemplateFailed',
  internal: 'HelmUnavailable',
  capabilities: 'ClusterCapabilitiesUnavailable',
};

/** A chart that gave no manifests; the message names the render (`helm template <path>`) and what to fix. */
export class HelmError extends IntentError {
  override readonly name = 'HelmError';
  readonly code = 'HELM_ERROR';
  readonly reason: string;
  readonly intent: 'stalled' | 'retryable';
  constructor(
    readonly failure: HelmFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.reason = REASONS[failure];
    // As for kustomize: the installation may be fixed under the running controller; a chart that
    // fails keeps failing until its revision or the spec changes.
    this.intent = failure === 'internal' || failure === 'capabilities' ? 'retryable' : 'stalled';
  }
}
