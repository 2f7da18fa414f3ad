import { IntentError } from '../errors/intent-error.js';
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { forbiddenAddressReason } from './forbidden-address.js';
import { internalAddressReason, podAddresses, privateAddressReason } from './internal-address.js';
import type { SourceHostList } from './host-list.js';

/** A host name resolved to an address the controller must not connect to; raised before any connection. */
export class SourceAddressRefusedError extends IntentError {
  override readonly name = 'SourceAddressRefusedError';
  readonly code = 'SOURCE_ADDRESS_REFUSED';
  readonly intent = 'stalled';
  readonly reason = 'SourceNotAllowed';
  constructor(
    readonly hostname: string,
    readonly address: string,
    /** Why the address is refused (`a link-local address`...). */
    readonly refusal: string,
  ) {
    super(`${hostname} resolves to ${address}, ${refusal}`);
  }
}

/** dns.lookup's shape with `all: true`, the one guardedLookup asks its resolver for. */
export type ResolveAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

const systemResolveAll: ResolveAll = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * A `lookup` for Node's sockets that refuses, before connecting, a name any of whose addresses is link-local
 * or a cloud metadata address, or loopback or the pod's own unless `allowedHosts` names the host (any port:
 * the URL's port was checked against the list before). It runs at connect time on the very answer the
 * socket then connects to, so a name that resolved harmlessly once and to 169.254.169.254 or 127.0.0.1 the
 * next time (DNS rebinding) is refused too. Every address is checked, not only the first: Node may try
 * them all (happy eyeballs).
 */
export function guardedLookup(
  resolveAll: ResolveAll = systemResolveAll,
  allowedHosts: SourceHostList = [],
  /** Also refuse private (cluster-internal) addresses the list does not re-admit (a tenant's receiver). */
  refusePrivate = false,
): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) {
        callback(error, '', 0);
        return;
      }
      const readmitted = namesHost(allowedHosts, hostname);
      const own = readmitted ? new Set<string>() : podAddresses();
      for (const { address } of addresses) {
        const reason =
          forbiddenAddressReason(address) ??
          (readmitted
            ? undefined
            : (internalAddressReason(address, own) ??
              (refusePrivate ? privateAddressReason(address) : undefined)));
        if (reason !== undefined) {
          callback(new SourceAddressRefusedError(hostname, address, reason), '', 0);
          return;
        }
      }
      if (options.all === true) {
        callback(null, addresses);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        return;
      }
      callback(null, first.address, first.family);
    });
  };
}

/** Whether the list has an entry for `hostname`, with or without a port. */
function namesHost(list: SourceHostList, hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return list.some((entry) => entry === host || entry.replace(/:\d+$/, '') === host);
}
