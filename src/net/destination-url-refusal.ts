import { isIP } from 'node:net';
import { forbiddenAddressReason, isMetadataHostName } from './forbidden-address.js';
import { internalAddressReason, isLoopbackHostName, privateAddressReason } from './internal-address.js';
import { sourceHostListAllows, sourceHostOf, type SourceHostList } from './host-list.js';

const HTTP_SCHEMES: readonly string[] = ['https:', 'http:'];

/** How a list of hosts is read, and how messages name it. */
export interface HostListReading {
  /** The flag that lists the hosts, as messages name it. */
  readonly flag: string;
  /** What the list is of, as messages name it (`allowed source hosts`). */
  readonly hosts: string;
  /**
   * True (the default): a non-empty list is the only hosts allowed, as `--allowed-source-hosts`. False:
   * the list only re-admits internal addresses and any other public host stays allowed.
   */
  readonly narrows?: boolean;
  /** Also refuse private (cluster-internal) addresses unless the list names the host. Default false. */
  readonly refusePrivate?: boolean;
  /** The URL schemes this kind connects with; default `https:` and `http:`. */
  readonly schemes?: readonly string[];
}

/**
 * Why the controller must not connect to `url` (a source URL, a redirect's target, a remote server, a
 * receiver), or undefined when it may: a scheme other than http(s) (or the kind's `schemes`), a well-known cloud metadata host name,
 * an IP literal that is link-local or a metadata address, `localhost` or an IP literal that is loopback or
 * the pod's own (or private, when `named.refusePrivate`) unless `allowedHosts` names the host, or a host
 * outside a narrowing `allowedHosts` (empty: any host). A host name passes here and is checked again on what
 * DNS answers, when the connection is made (see guardedLookup): Node does not resolve IP literals, so they
 * are checked here, and only here.
 */
export function destinationUrlRefusal(
  url: string,
  allowedHosts: SourceHostList,
  named: HostListReading = { flag: '--allowed-source-hosts', hosts: 'allowed source hosts' },
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  const schemes = named.schemes ?? HTTP_SCHEMES;
  if (!schemes.includes(parsed.protocol)) {
    return `unsupported scheme ${parsed.protocol} (use ${schemes.map((scheme) => scheme.slice(0, -1)).join(' or ')})`;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isMetadataHostName(host)) return `${host} is a cloud metadata host name`;
  const addressReason = isIP(host) === 0 ? undefined : forbiddenAddressReason(host);
  if (addressReason !== undefined) return `${host} is ${addressReason}`;
  const listed = sourceHostListAllows(allowedHosts, url);
  if ((named.narrows ?? true) && allowedHosts.length > 0 && !listed) {
    return `${sourceHostOf(url)} is not among the ${named.hosts} (${allowedHosts.join(', ')})`;
  }
  // A listed host is re-admitted: loopback and the pod's own addresses stay out of any other. Asked
  // only then, since the pod's addresses are read from its interfaces on every ask.
  if (listed) return undefined;
  const internal = isLoopbackHostName(host)
    ? 'a loopback host name'
    : isIP(host) === 0
      ? undefined
      : (internalAddressReason(host) ??
        (named.refusePrivate === true ? privateAddressReason(host) : undefined));
  if (internal !== undefined) {
    return `${host} is ${internal} (${named.flag} may name it)`;
  }
  return undefined;
}
