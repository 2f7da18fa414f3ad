import { messageOf } from '../errors/message-of.js';
import { IntentError } from '../errors/intent-error.js';

/**
 * What the caller should do about a failed API call, as in docs/error-intents.md#1-the-three-intents:
 * `retryable` (the world may fix itself: 5xx, 429, 409, transport), `stalled` (a human must change
 * something: 4xx validation, forbidden, unknown kind).
 */
export type KubeErrorIntent = 'retryable' | 'stalled';

/**
 * A Status response from the API server, with the fields kubectl reads (`reason`, here `statusReason`,
 * and `message`). Reported as `ApplyFailed`: the request of a step that failed.
 */
export class KubeApiError extends IntentError {
  override readonly name: string = 'KubeApiError';
  readonly code = 'KUBE_API';
  readonly intent: KubeErrorIntent;
  readonly reason: string = 'ApplyFailed';
  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status code. */
    readonly status: number,
    /** The Status `reason` (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ...), '' when absent. */
    readonly statusReason: string,
    readonly detail: string,
  ) {
    super(`${method} ${path}: ${status}${statusReason === '' ? '' : ` ${statusReason}`}: ${detail}`);
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

/**
 * The API server refused to let the client act as the user it impersonates (403, "cannot impersonate"):
 * the chart lets the controller impersonate only the accounts it names. Every request of the run is
 * refused alike, whatever the object, so the set stalls with that rather than list each object.
 */
export class ImpersonationRefusedError extends KubeApiError {
  override readonly name = 'ImpersonationRefusedError';
  override readonly reason = 'ImpersonationForbidden';
}

/** The API server's wording when impersonating the account is not allowed; it names no object. */
const CANNOT_IMPERSONATE = /cannot impersonate resource "serviceaccounts"/;

/** The request never got an HTTP answer (connection refused, TLS, timeout). Retryable. */
export class KubeTransportError extends IntentError {
  override readonly name = 'KubeTransportError';
  readonly code = 'KUBE_TRANSPORT';
  readonly intent = 'retryable';
  readonly reason = 'ApplyFailed';
  readonly retryable = true;
  constructor(
    readonly method: string,
    readonly path: string,
    options: { cause: unknown },
  ) {
    super(`${method} ${path}: ${messageOf(options.cause)}`, options);
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
  let statusReason = '';
  let detail = body.trim().slice(0, 2000);
  try {
    // eslint-disable-next-line parse-door/one-parse-door -- an API server's Status, read for two strings and never walked; its body is bounded by the client that read it
    const parsed = JSON.parse(body) as { kind?: unknown; reason?: unknown; message?: unknown };
    if (typeof parsed.reason === 'string') statusReason = parsed.reason;
    if (typeof parsed.message === 'string') detail = parsed.message;
  } catch {
    // Not a Status object (a proxy's HTML page, an empty body): keep the raw text as the detail.
    statusReason = '';
  }
  const text = detail === '' ? `HTTP ${status}` : detail;
  return status === 403 && CANNOT_IMPERSONATE.test(text)
    ? new ImpersonationRefusedError(method, path, status, statusReason, text)
    : new KubeApiError(method, path, status, statusReason, text);
}
