import { IntentError } from '../errors/intent-error.js';

/**
 * The proxy answered a CONNECT with other than 200: 407 when it wants credentials it was not given (the
 * proxy Secret's `username`/`password`, or those of HTTPS_PROXY), 403 when its rules refuse the target,
 * 502/503/504 when it could not reach it. Nothing was sent to the target.
 */
export class ProxyRefusedError extends IntentError {
  override readonly name = 'ProxyRefusedError';
  readonly code = 'PROXY_REFUSED';
  readonly reason = 'ProxyRefused';
  /** Credentials or rules to change are a human's (stalled); a proxy that could not reach the target may. */
  readonly intent: 'stalled' | 'retryable';
  constructor(
    /** `host:port` of the proxy. */
    readonly proxy: string,
    /** `host:port` the tunnel was asked for. */
    readonly target: string,
    readonly statusCode: number,
  ) {
    super(`the proxy ${proxy} answered ${statusCode} to CONNECT ${target}${hintOf(statusCode)}`);
    this.intent = statusCode >= 500 ? 'retryable' : 'stalled';
  }
}

function hintOf(statusCode: number): string {
  if (statusCode === 407) return ': it wants credentials (username and password of the proxy Secret)';
  if (statusCode === 403) return ': its rules refuse that destination';
  return '';
}
