/**
 * What can go wrong reading a chart of a Helm repository, each with its intent (docs/helm.md,
 * "Failures"): a chart or version the index does not list, an archive that is not what the index says
 * and an index past its bound need a human (stalled); a repository that is down or silent is retried.
 */
import { IntentError } from '../../errors/intent-error.js';

/** The index lists no chart of that name. */
export class HelmChartNotFoundError extends IntentError {
  override readonly name = 'HelmChartNotFoundError';
  readonly code = 'HELM_CHART_NOT_FOUND';
  readonly intent = 'stalled';
  readonly reason = 'HelmChartNotFound';
}

/** The chart has no version satisfying spec.helm.version. */
export class HelmChartVersionNotFoundError extends IntentError {
  override readonly name = 'HelmChartVersionNotFoundError';
  readonly code = 'HELM_CHART_VERSION_NOT_FOUND';
  readonly intent = 'stalled';
  readonly reason = 'HelmChartVersionNotFound';
}

/** The archive downloaded is not the one the index names by its sha256 digest. */
export class HelmChartDigestMismatchError extends IntentError {
  override readonly name = 'HelmChartDigestMismatchError';
  readonly code = 'HELM_CHART_DIGEST_MISMATCH';
  readonly intent = 'stalled';
  readonly reason = 'HelmChartDigestMismatch';
}

/** index.yaml is larger than the controller reads. */
export class HelmIndexTooLargeError extends IntentError {
  override readonly name = 'HelmIndexTooLargeError';
  readonly code = 'HELM_INDEX_TOO_LARGE';
  readonly intent = 'stalled';
  readonly reason = 'HelmIndexTooLarge';
}

/** index.yaml, or the chart's archive, is not what a Helm repository serves: its shape, a status. */
export class HelmRepositoryInvalidError extends IntentError {
  override readonly name = 'HelmRepositoryInvalidError';
  readonly code = 'HELM_REPOSITORY_INVALID';
  readonly intent = 'stalled';
  readonly reason = 'HelmRepositoryInvalid';
}

/** 401 or 403: no credentials, or refused ones. */
export class HelmRepositoryAuthError extends IntentError {
  override readonly name = 'HelmRepositoryAuthError';
  readonly code = 'HELM_REPOSITORY_AUTH_FAILED';
  readonly intent = 'stalled';
  readonly reason = 'AuthenticationFailed';
}

/** No answer, a broken connection, 429 or 5xx: tried again with backoff, nothing of the set touched. */
export class HelmRepositoryUnreachableError extends IntentError {
  override readonly name = 'HelmRepositoryUnreachableError';
  readonly code = 'HELM_REPOSITORY_UNREACHABLE';
  readonly intent = 'retryable';
  readonly reason = 'HelmRepositoryUnreachable';
}

/**
 * spec.source.secretRef's credentials are not for the repository's host (their Secret's
 * `applyset.dev/source-hosts`), or name no host while the controller requires it: nothing was sent.
 */
export class HelmCredentialsNotForHostError extends IntentError {
  override readonly name = 'HelmCredentialsNotForHostError';
  readonly code = 'HELM_CREDENTIALS_NOT_FOR_HOST';
  readonly intent = 'stalled';
  readonly reason = 'CredentialsNotForHost';
}
