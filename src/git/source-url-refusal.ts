import { isIP } from 'node:net';
import { forbiddenAddressReason, isMetadataHostName } from './forbidden-source-address.js';
import { internalAddressReason, isLoopbackHostName } from './internal-source-address.js';
import { sourceHostListAllows, sourceHostOf, type SourceHostList } from './source-host-list.js';

/**
 * Why the controller must not fetch from `url` (the source URL or a redirect's target), or undefined when it
 * may: a scheme other than http(s), a well-known cloud metadata host name, an IP literal that is link-local or
 * a metadata address, `localhost` or an IP literal that is loopback or the pod's own (unless `allowedHosts`
 * names the host), or a host outside `allowedHosts` (empty: any host). A host name passes here and is
 * checked again on what DNS answers, when the connection is made (see guardedLookup): Node does not resolve
 * IP literals, so they are checked here, and only here.
 */
export function sourceUrlRefusal(
  url: string,
  allowedHosts: SourceHostList,
  /** The flag that lists the hosts, and what its list is of, as the messages name them. */
  named: { readonly flag: string; readonly hosts: string } = {
    flag: '--allowed-source-hosts',
    hosts: 'allowed source hosts',
  },
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return `unsupported scheme ${parsed.protocol} (use https or http)`;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isMetadataHostName(host)) return `${host} is a cloud metadata host name`;
  const addressReason = isIP(host) === 0 ? undefined : forbiddenAddressReason(host);
  if (addressReason !== undefined) return `${host} is ${addressReason}`;
  if (allowedHosts.length > 0 && !sourceHostListAllows(allowedHosts, url)) {
    return `${sourceHostOf(url)} is not among the ${named.hosts} (${allowedHosts.join(', ')})`;
  }
  // A listed host was re-admitted above; with no list, loopback and the pod's own addresses stay out.
  const internal = isLoopbackHostName(host)
    ? 'a loopback host name'
    : isIP(host) === 0
      ? undefined
      : internalAddressReason(host);
  if (internal !== undefined && !sourceHostListAllows(allowedHosts, url)) {
    return `${host} is ${internal} (${named.flag} may name it)`;
  }
  return undefined;
}
