import { parseRevision } from '../git/git-ref.js';
import type { NotificationEvent, NotificationSeverity } from './notification-event.js';

/** The headline of a message: who, what, which revision. */
function titleOf(event: NotificationEvent): string {
  const revision = event.revision === undefined ? '' : ` at ${shortenedRevision(event.revision)}`;
  return `ApplySet ${event.namespace}/${event.name}: ${event.state}${revision}`;
}

/** `main@sha1:<40 hex>` shown as `main@sha1:<12 hex>`, as people quote a commit. */
function shortenedRevision(revision: string): string {
  const parsed = parseRevision(revision);
  if (parsed === undefined) return revision;
  const commit = `sha1:${parsed.commit.slice(0, 12)}`;
  return parsed.ref === undefined ? commit : `${parsed.ref}@${commit}`;
}

function bodyOf(event: NotificationEvent): string {
  return [event.summary, ...event.details.map((line) => `• ${line}`)].join('\n');
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

const SLACK_COLORS: Record<NotificationSeverity, string> = {
  info: '#2eb67d',
  warning: '#ecb22e',
  error: '#e01e5a',
};

/*
 * Each body names the cluster (`--cluster-name`, `in-cluster` when unset) where its format has a field
 * for it, so a channel fed by several clusters tells them apart; the title stays the ApplySet's.
 */

/**
 * A Slack incoming webhook body. `text` is required (it is the notification's fallback); `blocks`
 * carry the layout, and a section's text is limited to 3000 characters.
 */
export function slackPayload(event: NotificationEvent, cluster: string): Record<string, unknown> {
  const title = titleOf(event);
  return {
    text: truncate(`${title}: ${event.summary}`, 3000),
    attachments: [
      {
        color: SLACK_COLORS[event.severity],
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: truncate(title, 150) } },
          { type: 'section', text: { type: 'mrkdwn', text: truncate(bodyOf(event), 3000) } },
          {
            type: 'context',
            elements: [
              {
                type: 'mrkdwn',
                text: `cluster: ${cluster} · reason: ${event.reason} · severity: ${event.severity}`,
              },
            ],
          },
        ],
      },
    ],
  };
}

const TEAMS_COLORS: Record<NotificationSeverity, string> = {
  info: 'Good',
  warning: 'Warning',
  error: 'Attention',
};

/**
 * A Microsoft Teams incoming webhook (or Workflows) message: `type: message` with one attachment, an
 * Adaptive Card.
 */
export function teamsPayload(event: NotificationEvent, cluster: string): Record<string, unknown> {
  const facts = [
    { title: 'Cluster', value: cluster },
    { title: 'ApplySet', value: `${event.namespace}/${event.name}` },
    { title: 'State', value: event.state },
    { title: 'Reason', value: event.reason },
    ...(event.revision === undefined ? [] : [{ title: 'Revision', value: event.revision }]),
  ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: titleOf(event),
              weight: 'Bolder',
              size: 'Medium',
              wrap: true,
              color: TEAMS_COLORS[event.severity],
            },
            { type: 'TextBlock', text: event.summary, wrap: true },
            { type: 'FactSet', facts },
            ...event.details.map((line) => ({ type: 'TextBlock', text: line, wrap: true, spacing: 'None' })),
          ],
        },
      },
    ],
  };
}

const DISCORD_COLORS: Record<NotificationSeverity, number> = {
  info: 0x2eb67d,
  warning: 0xecb22e,
  error: 0xe01e5a,
};

/**
 * Discord's documented limits on a webhook message and its embeds.
 * @internal test seam: the unit test checks a payload against these limits
 */
export const DISCORD_LIMITS = {
  content: 2000,
  title: 256,
  description: 4096,
  fieldName: 256,
  fieldValue: 1024,
  fields: 25,
  embedTotal: 6000,
} as const;

/**
 * A Discord webhook body: `content` (at most 2000 characters) and one embed within Discord's limits
 * (title 256, description 4096, 25 fields, 6000 characters in all).
 */
export function discordPayload(event: NotificationEvent, cluster: string): Record<string, unknown> {
  const title = truncate(titleOf(event), DISCORD_LIMITS.title);
  const fields = [
    { name: 'Cluster', value: cluster, inline: true },
    { name: 'Reason', value: event.reason, inline: true },
    { name: 'Severity', value: event.severity, inline: true },
    ...(event.revision === undefined ? [] : [{ name: 'Revision', value: event.revision, inline: false }]),
  ].map((field) => ({ ...field, value: truncate(field.value, DISCORD_LIMITS.fieldValue) }));
  const used = title.length + fields.reduce((sum, f) => sum + f.name.length + f.value.length, 0);
  const room = Math.min(DISCORD_LIMITS.description, DISCORD_LIMITS.embedTotal - used);
  return {
    content: truncate(`${title}: ${event.summary}`, DISCORD_LIMITS.content),
    embeds: [
      {
        title,
        description: truncate(bodyOf(event), room),
        color: DISCORD_COLORS[event.severity],
        fields,
      },
    ],
  };
}
