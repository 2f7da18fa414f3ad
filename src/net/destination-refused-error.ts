import { IntentError } from '../errors/intent-error.js';
import type { DestinationKind } from './destination-policy.js';

/**
 * A destination the address policy of its kind refuses, found before any connection was opened: nothing
 * was sent, and the message says why without saying whether anything listens there.
 */
export class DestinationRefusedError extends IntentError {
  override readonly name = 'DestinationRefusedError';
  readonly code = 'DESTINATION_REFUSED';
  readonly intent = 'stalled';
  readonly reason = 'SourceNotAllowed';
  constructor(
    readonly kind: DestinationKind,
    /** `host` or `host:port`, never the path or query (a receiver's URL may hold a credential). */
    readonly host: string,
    readonly refusal: string,
  ) {
    super(`${host} is refused as a ${kind} destination: ${refusal}`);
  }
}

/** An answer longer than the bound of its kind: it was not read further and the connection was closed. */
export class ResponseTooLargeError extends IntentError {
  override readonly name = 'ResponseTooLargeError';
  readonly code = 'RESPONSE_TOO_LARGE';
  readonly intent = 'stalled';
  readonly reason = 'ResponseTooLarge';
  constructor(
    readonly kind: DestinationKind,
    readonly where: string,
    readonly limitBytes: number,
  ) {
    super(
      `the answer of ${where} is larger than ${limitBytes} bytes, the limit for one ${kind} answer; it was not read further`,
    );
  }
}
