/**
 * What can go wrong asking an OCI registry for an artifact, each with its intent (docs/oci-sources.md):
 * refused credentials and a missing tag need a human (stalled); a registry that is down, overloaded or
 * silent is retried with backoff; an answer that is not what it claims is stalled, never applied.
 */
import { IntentError } from '../../errors/intent-error.js';

/** 401 or 403 from the registry (or its token service): no credentials, or refused ones. */
export class RegistryAuthError extends IntentError {
  override readonly name = 'RegistryAuthError';
  readonly code = 'REGISTRY_AUTH_FAILED';
  readonly intent = 'stalled';
  readonly reason = 'AuthenticationFailed';
}

/** 404: the repository, the tag or the digest is not in the registry. */
export class ArtifactNotFoundError extends IntentError {
  override readonly name = 'ArtifactNotFoundError';
  readonly code = 'ARTIFACT_NOT_FOUND';
  readonly intent = 'stalled';
  readonly reason = 'ArtifactNotFound';
}

/** No answer, a broken connection, 429 or 5xx: tried again with backoff, nothing of the set touched. */
export class RegistryUnreachableError extends IntentError {
  override readonly name = 'RegistryUnreachableError';
  readonly code = 'REGISTRY_UNREACHABLE';
  readonly intent = 'retryable';
  readonly reason = 'RegistryUnreachable';
}

/** An answer that is not an artifact the controller reads: wrong digest, media type, shape or size. */
export class ArtifactInvalidError extends IntentError {
  override readonly name = 'ArtifactInvalidError';
  readonly code = 'ARTIFACT_INVALID';
  readonly intent = 'stalled';
  readonly reason = 'ArtifactInvalid';
}
