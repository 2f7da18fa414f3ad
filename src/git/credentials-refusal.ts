import {
  SOURCE_HOSTS_ANNOTATION,
  sourceHostListAllows,
  sourceHostOf,
  type SourceHostList,
} from './source-host-list.js';

/**
 * Why credentials must not be sent to `url`, or undefined when they may, phrased to follow their subject
 * ("Secret ns/name …"): `hosts` is what their Secret names in `applyset.dev/source-hosts` (undefined: the
 * Secret has no such annotation, which is refused only when `requireHosts`). The URL's host must be listed;
 * a listed host without a port stands for every port of that host.
 */
export function credentialsRefusal(
  url: string,
  hosts: SourceHostList | undefined,
  requireHosts: boolean,
): string | undefined {
  if (hosts === undefined) {
    return requireHosts
      ? `names no hosts (annotation ${SOURCE_HOSTS_ANNOTATION}), which this controller requires`
      : undefined;
  }
  if (sourceHostListAllows(hosts, url)) return undefined;
  const listed = hosts.length === 0 ? 'no host' : hosts.join(', ');
  return `is for ${listed} (annotation ${SOURCE_HOSTS_ANNOTATION}), not ${sourceHostOf(url)}`;
}
