import {
  SOURCE_HOSTS_ANNOTATION,
  sourceHostListAllows,
  sourceHostOf,
  type SourceHostList,
} from '../net/host-list.js';
import { GitCredentialsNotForHostError, GitSourceNotAllowedError } from './git-error.js';
import type { RepositoryUrl } from './parse-repository-url.js';
import { destinationUrlRefusal } from '../net/destination-url-refusal.js';
import { gitPolicy } from '../net/destination-policy.js';

/**
 * Why credentials must not be sent to `url`, or undefined when they may, phrased to follow their subject
 * ("Secret ns/name …"): `hosts` is what their Secret names in `applyset.dev/source-hosts` (undefined: the
 * Secret has no such annotation, which is refused only when `requireHosts`). The URL's host must be listed;
 * a listed host without a port stands for every port of that host. Notifications apply the same rule
 * to their Secret's address.
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

/** Both refusals come before any request: nothing goes out, with or without the credentials. */
export function refuseDisallowedSource(
  repository: RepositoryUrl,
  auth: { readonly hosts?: SourceHostList | undefined; readonly from?: string | undefined } | undefined,
  allowedHosts: SourceHostList,
  requireCredentialHosts: boolean,
): void {
  const sourceRefusal = destinationUrlRefusal(repository.url, allowedHosts, gitPolicy(allowedHosts).reading);
  if (sourceRefusal !== undefined) throw new GitSourceNotAllowedError(repository.url, sourceRefusal);
  if (auth === undefined) return;
  const refusal = credentialsRefusal(repository.url, auth.hosts, requireCredentialHosts);
  if (refusal !== undefined) {
    throw new GitCredentialsNotForHostError(repository.url, `${auth.from ?? 'they'} ${refusal}`);
  }
}
