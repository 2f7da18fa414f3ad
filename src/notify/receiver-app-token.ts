/**
 * A GitHub commit-status Notification whose Secret holds a GitHub App instead of a token (the keys of a
 * Git credentials Secret, src/github-app/github-app-secret.ts): the app's installation token is the
 * Bearer token the statuses are posted with. The API host must be among the Secret's
 * `applyset.dev/source-hosts`, as the address is, and the exchange goes through the door under the
 * Notification's own policy. `githubAppBaseURL` defaults to the Secret's `address` (the API base the
 * statuses go to), so a GitHub Enterprise Secret names its API once.
 */
import { messageOf } from '../errors/message-of.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import { credentialsRefusal } from '../git/credentials-refusal.js';
import { GITHUB_APP_KEYS, githubAppOf } from '../github-app/github-app-secret.js';
import { createInstallationTokens, type InstallationTokens } from '../github-app/installation-tokens.js';
import { notificationPolicy } from '../net/destination-policy.js';
import type { SourceHostList } from '../net/host-list.js';
import type { NotificationConfig } from './notification-spec.js';

/** The token cache of notifications, and `--internal-notification-hosts` its API calls go under. */
export interface NotificationGitHubApps {
  readonly tokens: InstallationTokens;
  readonly internalHosts: SourceHostList;
}

/** A cache of its own, loopback and private hosts refused (a notifier made without the controller's settings). */
export function defaultNotificationGitHubApps(): NotificationGitHubApps {
  return { tokens: createInstallationTokens(), internalHosts: [] };
}

/**
 * The installation token of the app a github Notification's Secret holds; undefined when it holds none
 * (or the provider is not github); a problem, phrased as a whole sentence, when no token can be had.
 */
export async function receiverAppToken(
  secret: {
    readonly data: Readonly<Record<string, string>>;
    readonly address: string;
    readonly hosts: SourceHostList | undefined;
  },
  what: string,
  config: NotificationConfig,
  apps: NotificationGitHubApps,
  signal: AbortSignal,
): Promise<{ readonly token: string } | { readonly problem: string } | undefined> {
  if (config.provider !== 'github') return undefined;
  const found = githubAppOf({ [GITHUB_APP_KEYS.baseUrl]: secret.address, ...secret.data }, what);
  if (found === undefined) return undefined;
  if ('problem' in found) return { problem: `${what} ${found.problem}; nothing was sent` };
  const refusal = credentialsRefusal(found.app.baseUrl, secret.hosts, true);
  if (refusal !== undefined) return { problem: `${what} ${refusal}; nothing was sent` };
  const sender = config.acrossNamespaces === undefined ? 'notification' : 'cluster-notification';
  try {
    const policy = notificationPolicy(apps.internalHosts, sender);
    return { token: (await apps.tokens.tokenFor(found.app, policy, signal)).token };
  } catch (error) {
    rethrowAbort(error);
    return { problem: `no GitHub App token: ${messageOf(error)}; nothing was sent` };
  }
}
