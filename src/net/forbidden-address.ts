import { isIP } from 'node:net';

/**
 * Host names that cloud providers answer with instance metadata (and often credentials). Refused by name as well as
 * by address, because some resolve only inside the instance's own resolver.
 */
const METADATA_HOST_NAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.tencentyun.com',
]);

/** True when `host` (a URL hostname, any case, optional trailing dot) is a well-known metadata host name. */
export function isMetadataHostName(host: string): boolean {
  return METADATA_HOST_NAMES.has(host.toLowerCase().replace(/\.$/, ''));
}

/**
 * Why a resolved address must not be connected to, or undefined when it may: link-local (169.254.0.0/16, which
 * holds 169.254.169.254, and fe80::/10), the IPv4-mapped and NAT64 forms of those, and AWS's IPv6 metadata
 * address fd00:ec2::254. These are refused whatever the allowed hosts say; loopback and the pod's own addresses
 * are refused too, but by internalAddressReason, which an allowed host re-admits. Private ranges stay allowed
 * (operators narrow them with allowed hosts).
 */
export function forbiddenAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return isLinkLocalV4(address) ? 'a link-local (cloud metadata) address' : undefined;
  if (family !== 6) return 'not an IP address';
  const groups = expandIpv6(address);
  const embedded = embeddedIpv4(groups);
  if (embedded !== undefined && isLinkLocalV4(embedded)) return 'a link-local (cloud metadata) address';
  if ((groups[0]! & 0xffc0) === 0xfe80) return 'a link-local address';
  if (groups.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return 'a cloud metadata address';
  return undefined;
}

function isLinkLocalV4(address: string): boolean {
  return address.startsWith('169.254.');
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) address. */
export function embeddedIpv4(groups: readonly number[]): string | undefined {
  const zeroPrefix = groups.slice(0, 5).every((g) => g === 0);
  const mapped = zeroPrefix && (groups[5] === 0xffff || groups[5] === 0);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!mapped && !nat64) return undefined;
  const [high, low] = [groups[6]!, groups[7]!];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Eight 16-bit groups of a valid IPv6 address (zone index dropped, dotted IPv4 tail converted). */
export function expandIpv6(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head === '' ? [] : head!.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill =
    tail === undefined ? [] : new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...fill, ...tailGroups].map((g) => parseInt(g, 16));
}
