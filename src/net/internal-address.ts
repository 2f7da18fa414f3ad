import { isIP } from 'node:net';
import os from 'node:os';
import { embeddedIpv4, expandIpv6 } from './forbidden-address.js';

/**
 * Why a resolved address is the controller's own side of the network, or undefined when it is not:
 * loopback (127.0.0.0/8, ::1 and their mapped forms), the unspecified addresses (0.0.0.0/8 and ::, which
 * Linux connects to the host itself) and any address of the pod's own interfaces. A source there reaches
 * what listens only for the pod (an admin port, a sidecar), so it is refused unless the operator names
 * the host in `--allowed-source-hosts`; link-local and metadata addresses stay refused even then.
 */
export function internalAddressReason(
  address: string,
  ownAddresses?: ReadonlySet<string>,
): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const v4 = family === 4 ? address : embeddedIpv4(expandIpv6(address));
  // ::1 and :: read as the IPv4-compatible 0.0.0.1 and 0.0.0.0.
  if (v4 !== undefined && (v4.startsWith('127.') || v4.startsWith('0.'))) return 'a loopback address';
  // The pod's own addresses (when not given) only now: reading the interfaces is a system call.
  const own = ownAddresses ?? podAddresses();
  if (own.has(normalizeAddress(address)) || (v4 !== undefined && own.has(v4))) {
    return "an address of the controller's own host";
  }
  return undefined;
}

/** `localhost` and its subdomains, which resolvers answer with loopback whatever DNS says (RFC 6761). */
export function isLoopbackHostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Every address of the pod's interfaces, read when asked: interfaces come and go. */
export function podAddresses(): ReadonlySet<string> {
  const addresses = new Set<string>();
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) addresses.add(normalizeAddress(entry.address));
  }
  return addresses;
}

/** One spelling per address: IPv6 as its eight groups, zone index dropped. */
function normalizeAddress(address: string): string {
  return isIP(address) === 6
    ? expandIpv6(address)
        .map((group) => group.toString(16))
        .join(':')
    : address;
}

/**
 * Why an address is on a private network (RFC 1918, shared address space RFC 6598, unique local
 * fc00::/7), or undefined. The cluster's Services and pods live there: a destination a tenant chooses
 * (a Notification's address) may not reach them unless the operator names the host.
 */
export function privateAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const groups = family === 6 ? expandIpv6(address) : undefined;
  const v4 = groups === undefined ? address : embeddedIpv4(groups);
  if (v4 !== undefined) {
    const [a, b] = v4.split('.').map(Number) as [number, number];
    const isPrivate =
      a === 10 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127);
    return isPrivate ? 'a private (cluster-internal) address' : undefined;
  }
  return ((groups?.[0] ?? 0) & 0xfe00) === 0xfc00 ? 'a private (cluster-internal) address' : undefined;
}
