import { IntentError } from '../errors/intent-error.js';

/**
 * What the caller should do about a failed API call, as in docs/error-intents.md#1-the-three-intents:
 * `retryable` (the world may fix itself: 5xx, 429, 409, transport), `stalled` (a human must change
 * something: 4xx validation, forbidden, unknown kind).
 */
export type KubeErrorIntent = 'retryable' | 'stalled';

/** A Status response from the API server, with the fields kubectl reads (`reason`, `message`). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly code = 'KUBE_API';
  readonly intent: KubeErrorIntent;
  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status code. */
    readonly status: number,
    /** The Status `reason` (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ...), '' when absent. */
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`${method} ${path}: ${status}${reason === '' ? '' : ` ${reason}`}: ${detail}`);
    this.intent = status >= 500 || status === 429 || status === 409 ? 'retryable' : 'stalled';
  }

  get retryable(): boolean {
    return this.intent === 'retryable';
  }

  get notFound(): boolean {
    return this.status === 404;
  }

  /**
   * The apiserver's answer to changing an immutable field: 422 Invalid with "field is immutable"
   * (a Service's clusterIP, a Deployment's selector, a Job's template...). kubectl --force answers it
   * by deleting and recreating the object.
   */
  get immutableField(): boolean {
    return (
      this.status === 422 && /field is immutable|Forbidden: updates to .* are forbidden/.test(this.detail)
    );
  }
}

/** The request never got an HTTP answer (connection refused, TLS, timeout). Retryable. */
export class KubeTransportError extends Error {
  override readonly name = 'KubeTransportError';
  readonly code = 'KUBE_TRANSPORT';
  readonly intent = 'retryable';
  readonly retryable = true;
  constructor(
    readonly method: string,
    readonly path: string,
    options: { cause: unknown },
  ) {
    super(
      `${method} ${path}: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
  }
}

/** Discovery does not know the kind: the CRD is missing, or the apiVersion is wrong. Stalled. */
export class UnknownKindError extends IntentError {
  override readonly name = 'UnknownKindError';
  readonly code = 'UNKNOWN_KIND';
  readonly intent = 'stalled';
  readonly reason = 'UnknownKind';
  constructor(
    readonly group: string,
    readonly kind: string,
    readonly version: string | undefined,
    detail: string,
  ) {
    const apiVersion = version === undefined ? group : group === '' ? version : `${group}/${version}`;
    super(
      `no kind "${kind}" is registered for ${apiVersion === '' ? 'the core group' : `"${apiVersion}"`}: ${detail}`,
    );
  }
}

/** Builds the error for a non-2xx answer from its Status body, when it has one. */
export function kubeApiErrorFrom(method: string, path: string, status: number, body: string): KubeApiError {
  let reason = '';
  let detail = body.trim().slice(0, 2000);
  try {
    const parsed = JSON.parse(body) as { kind?: unknown; reason?: unknown; message?: unknown };
    if (typeof parsed.reason === 'string') reason = parsed.reason;
    if (typeof parsed.message === 'string') detail = parsed.message;
  } catch {
    // Not a Status object (a proxy's HTML page, an empty body): keep the raw text as the detail.
    reason = '';
  }
  return new KubeApiError(method, path, status, reason, detail === '' ? `HTTP ${status}` : detail);
}
