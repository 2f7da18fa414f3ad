import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import type { DestinationPolicy } from './destination-policy.js';
import { destinationLookup } from './outbound-request.js';

/**
 * A keep-alive agent for one https destination (an API server: one TLS handshake for a set of 1,000
 * objects, not one per request), its sockets resolving names under the destination's policy.
 */
export function createOutboundAgent(
  policy: DestinationPolicy,
  options: Omit<AgentOptions, 'lookup' | 'keepAlive'>,
): HttpsAgent {
  const lookup = destinationLookup(policy);
  return new HttpsAgent({ ...options, keepAlive: true, ...(lookup === undefined ? {} : { lookup }) });
}
