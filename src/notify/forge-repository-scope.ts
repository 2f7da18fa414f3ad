/**
 * Whose repositories a ClusterNotification's forge token may mark. The token is the platform's, and
 * the repository a status goes to is the one a tenant's ApplySet names in spec.source.url: without a
 * bound, any tenant could have the platform's token mark commits (a green "deployed" on a release
 * candidate, a red one on a rival's pull request) on any repository it can write. So a forge
 * ClusterNotification marks only the repositories its spec.repositories lists (docs/notifications.md);
 * a Notification's token is the tenant's own and needs no such list.
 */
import { ownerAndRepo } from './commit-status-provider.js';

/**
 * Why the platform token may not mark the repository of `sourceUrl`, or undefined when a
 * `spec.repositories` entry lists it. An entry is `host[:port]/owner/repository`, or
 * `host[:port]/owner/*` for every repository of that owner (a GitLab group path may have more
 * segments); hosts and paths compare case-insensitively, as the forges treat them.
 */
export function forgeScopeRefusal(
  repositories: readonly string[],
  sourceUrl: string,
  who: string,
): string | undefined {
  const named = repositoryOf(sourceUrl);
  const listed = `${who} marks only the repositories its spec.repositories lists`;
  if (named === undefined)
    return `${listed}, and the ApplySet's spec.source.url names no host/owner/repository; nothing is sent`;
  if (repositories.length === 0) return `${listed}, and it lists none; nothing is sent`;
  if (repositories.some((entry) => matches(entry.toLowerCase(), named))) return undefined;
  return `${listed} (${repositories.join(', ')}), and the ApplySet's source is ${named}; nothing is sent`;
}

/** `host[:port]/owner/repository` of a source URL, lower-cased; undefined for one without them. */
function repositoryOf(sourceUrl: string): string | undefined {
  let host: string;
  try {
    const url = new URL(
      /^[a-z][a-z0-9+.-]*:\/\//i.test(sourceUrl) ? sourceUrl : `ssh://${sourceUrl.replace(/:(?!\d)/, '/')}`,
    );
    host = url.host;
    const [owner, repo] = ownerAndRepo(sourceUrl);
    return `${host}/${owner}/${repo}`.toLowerCase();
  } catch {
    // Not a URL, or a path without an owner/repository: nothing to mark.
    return undefined;
  }
}

function matches(entry: string, repository: string): boolean {
  if (entry.endsWith('/*')) {
    const owner = entry.slice(0, -1);
    return repository.startsWith(owner) && !repository.slice(owner.length).includes('/');
  }
  return entry.replace(/\.git$/, '') === repository;
}
