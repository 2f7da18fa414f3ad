import { createHmac } from 'node:crypto';
import type { NotificationEvent } from './notification-event.js';

/**
 * The headers a receiver verifies a generic webhook with (docs/notifications.md).
 * @internal test seam: the tests' receivers verify a message as a user's would
 */
export const SIGNATURE_HEADER = 'x-applyset-signature';
/** @internal test seam: as SIGNATURE_HEADER */
export const TIMESTAMP_HEADER = 'x-applyset-timestamp';

/**
 * The generic webhook: the event and the cluster (`--cluster-name`) as JSON, signed. The signature is HMAC-SHA256 over
 * `<timestamp>.<body>` with the Secret's key, hex, as `sha256=<hex>`; the timestamp (Unix seconds)
 * is signed with the body so a receiver can refuse an old message replayed.
 */
export function signedWebhook(
  event: NotificationEvent,
  key: string,
  nowMs: number,
  cluster: string,
): { readonly body: string; readonly headers: Record<string, string> } {
  const timestamp = String(Math.floor(nowMs / 1000));
  const body = JSON.stringify({
    cluster,
    applySet: { namespace: event.namespace, name: event.name },
    state: event.state,
    severity: event.severity,
    reason: event.reason,
    revision: event.revision ?? null,
    summary: event.summary,
    details: event.details,
    timestamp: new Date(nowMs).toISOString(),
  });
  return {
    body,
    headers: { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signatureOf(key, timestamp, body) },
  };
}

/**
 * What a receiver computes to check a message: compare it to the header in constant time.
 * @internal test seam: the tests' receivers verify a message as a user's would
 */
export function signatureOf(key: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;
}
