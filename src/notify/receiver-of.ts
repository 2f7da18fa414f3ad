import { parseRevision } from '../git/git-ref.js';
import { alertmanagerAlerts } from './alertmanager-alerts.js';
import { discordPayload, slackPayload, teamsPayload } from './chat-payloads.js';
import {
  commitStateOf,
  commitStatusContext,
  giteaStatuses,
  githubStatuses,
  gitlabStatuses,
  type CommitStatusProvider,
} from './commit-status-provider.js';
import type { Delivery, NotificationReceiver } from './notification-dispatcher.js';
import type { NotificationEvent } from './notification-event.js';
import { forgeScopeRefusal } from './forge-repository-scope.js';
import { receiverIdOf, type NotificationConfig } from './notification-spec.js';
import { signedWebhook } from './signed-webhook.js';

/** What a Notification's Secret holds: where to send, and the token or HMAC key when the type needs one. */
export interface ReceiverSecret {
  readonly address: string;
  /** `ca.crt`: the authority a receiver's certificate is signed by, trusted for it alone. */
  readonly ca?: string;
  readonly token?: string;
  readonly hmacKey?: string;
}

/** Who the message is about, beyond the event: the cluster, and the repository a commit status marks. */
interface ReceiverContext {
  readonly cluster: string;
  readonly sourceUrl: string | undefined;
  readonly now: () => number;
}

/** A receiver, and which events it has something to say about. */
type SelectiveReceiver = NotificationReceiver & { wants(event: NotificationEvent): boolean };

/**
 * The receiver a Notification stands for, or why it has none for this ApplySet: a forge provider needs
 * a repository to mark, and an ApplySet whose source names none gets nothing (not a chat body sent to
 * the forge's API).
 */
type ReceiverFor =
  | { readonly ok: true; readonly receiver: SelectiveReceiver }
  | { readonly ok: false; readonly problem: string };

/** The providers that mark commits (commit statuses) rather than post messages. */
export const FORGES: ReadonlySet<string> = new Set(['github', 'gitlab', 'gitea']);

/**
 * The receiver a Notification stands for: its provider's body, sent to the Secret's address. It does
 * not want an event its provider has nothing to say about (a commit status on drift, or without a
 * commit).
 */
export function receiverOf(
  config: NotificationConfig,
  secret: ReceiverSecret,
  context: ReceiverContext,
): ReceiverFor {
  if (FORGES.has(config.provider)) {
    const forge = forgeOf(config, secret, context.sourceUrl);
    if (forge === undefined) {
      return {
        ok: false,
        problem: `a ${config.provider} commit status needs a repository, and the ApplySet's spec.source.url names none (owner/repository); nothing is sent`,
      };
    }
    // The platform's token marks only what the ClusterNotification lists: the tenant names the repository.
    const refusal =
      config.acrossNamespaces === undefined || context.sourceUrl === undefined
        ? undefined
        : forgeScopeRefusal(
            config.acrossNamespaces.repositories,
            context.sourceUrl,
            `ClusterNotification ${config.name}`,
          );
    if (refusal !== undefined) return { ok: false, problem: refusal };
    return {
      ok: true,
      receiver: {
        id: receiverIdOf(config),
        delivery: (event) => withCa(commitStatusDelivery(forge, event, context.cluster), secret),
        wants: (event) => commitOf(event) !== undefined && commitStateOf(event.state) !== undefined,
      },
    };
  }
  return { ok: true, receiver: chatReceiver(config, secret, context) };
}

function chatReceiver(
  config: NotificationConfig,
  secret: ReceiverSecret,
  context: ReceiverContext,
): SelectiveReceiver {
  const delivery = (event: NotificationEvent): Delivery => {
    const json = (body: unknown, headers: Record<string, string> = {}): Delivery => ({
      url: secret.address,
      headers,
      body: JSON.stringify(body),
    });
    const bearer: Record<string, string> =
      secret.token === undefined ? {} : { authorization: `Bearer ${secret.token}` };
    switch (config.provider) {
      case 'msteams':
        return json(teamsPayload(event, context.cluster));
      case 'discord':
        return json(discordPayload(event, context.cluster));
      case 'alertmanager':
        return {
          ...json(alertmanagerAlerts(event, context.now(), context.cluster), bearer),
          url: `${secret.address.replace(/\/+$/, '')}/api/v2/alerts`,
        };
      case 'webhook': {
        const signed = signedWebhook(event, secret.hmacKey ?? '', context.now(), context.cluster);
        return { url: secret.address, headers: { ...bearer, ...signed.headers }, body: signed.body };
      }
      default:
        return json(slackPayload(event, context.cluster));
    }
  };
  return {
    id: receiverIdOf(config),
    delivery: (event) => withCa(delivery(event), secret),
    wants: () => true,
  };
}

function withCa(delivery: Delivery, { ca }: ReceiverSecret): Delivery {
  return ca === undefined ? delivery : { ...delivery, ca };
}

function forgeOf(
  config: NotificationConfig,
  secret: ReceiverSecret,
  sourceUrl: string | undefined,
): CommitStatusProvider | undefined {
  if (sourceUrl === undefined) return undefined;
  const token = secret.token ?? '';
  try {
    switch (config.provider) {
      case 'github':
        return githubStatuses(secret.address, sourceUrl, token);
      case 'gitlab':
        return gitlabStatuses(secret.address, sourceUrl, token);
      case 'gitea':
        return giteaStatuses(secret.address, sourceUrl, token);
      default:
        return undefined;
    }
  } catch {
    // A URL without an owner/repository path (or not a URL at all): no repository to mark.
    return undefined;
  }
}

function commitStatusDelivery(
  forge: CommitStatusProvider,
  event: NotificationEvent,
  cluster: string,
): Delivery {
  const request = forge.request({
    sha: commitOf(event) ?? '',
    state: commitStateOf(event.state) ?? 'error',
    context: commitStatusContext(cluster, event.namespace, event.name),
    // The reason, then the first object's error: what a person needs first, within the forge's limit.
    description: [`${event.reason}: ${event.summary}`, ...event.details.slice(0, 1)].join('; '),
  });
  return { url: request.url, headers: request.headers, body: request.body };
}

/** The commit of a revision `branch@sha1:<sha>`, `tag@sha1:<sha>` or `sha1:<sha>`. */
function commitOf(event: NotificationEvent): string | undefined {
  return parseRevision(event.revision ?? '')?.commit;
}
