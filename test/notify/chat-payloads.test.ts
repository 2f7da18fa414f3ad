import { timingSafeEqual } from 'node:crypto';
import { alertmanagerAlerts } from '../../src/notify/alertmanager-alerts.js';
import {
  DISCORD_LIMITS,
  discordPayload,
  slackPayload,
  teamsPayload,
} from '../../src/notify/chat-payloads.js';
import type { NotificationEvent } from '../../src/notify/notification-event.js';
import {
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  signatureOf,
  signedWebhook,
} from '../../src/notify/signed-webhook.js';

const failed: NotificationEvent = {
  namespace: 'team-a',
  name: 'web',
  topic: 'sync',
  state: 'failed',
  severity: 'error',
  reason: 'ApplyFailed',
  revision: `main@sha1:def4567890ab${'c'.repeat(28)}`,
  summary: 'revision def456 failed: 1 object',
  details: ['team-a::ConfigMap:bad: data: must be a map'],
};

describe('Slack', () => {
  test('has the text Slack requires, and blocks within their limits', () => {
    const payload = slackPayload(failed, 'prod') as {
      text: string;
      attachments: { blocks: { type: string }[] }[];
    };
    expect(payload.text).toContain('ApplySet team-a/web: failed at main@sha1:def4567890ab:');
    const blocks = payload.attachments[0]?.blocks ?? [];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
    const long = slackPayload({ ...failed, details: [`x${'y'.repeat(5000)}`] }, 'prod');
    const section = (long as typeof payload).attachments[0]?.blocks[1] as unknown as {
      text: { text: string };
    };
    expect(section.text.text.length).toBeLessThanOrEqual(3000);
  });
});

describe('Microsoft Teams', () => {
  test('is a message with one Adaptive Card attachment', () => {
    const payload = teamsPayload(failed, 'prod') as {
      type: string;
      attachments: { contentType: string; content: { type: string; version: string; body: unknown[] } }[];
    };
    expect(payload.type).toBe('message');
    expect(payload.attachments).toHaveLength(1);
    expect(payload.attachments[0]?.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(payload.attachments[0]?.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(JSON.stringify(payload)).toContain('data: must be a map');
  });
});

describe('Discord', () => {
  test('keeps content and the embed within Discord limits', () => {
    const huge = { ...failed, summary: 's'.repeat(9000), details: ['d'.repeat(9000)] };
    const payload = discordPayload(huge, 'prod') as {
      content: string;
      embeds: { title: string; description: string; fields: { name: string; value: string }[] }[];
    };
    expect(payload.content.length).toBeLessThanOrEqual(DISCORD_LIMITS.content);
    const [embed] = payload.embeds;
    expect(embed?.description.length).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    const total =
      (embed?.title.length ?? 0) +
      (embed?.description.length ?? 0) +
      (embed?.fields ?? []).reduce((sum, f) => sum + f.name.length + f.value.length, 0);
    expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.embedTotal);
    expect(embed?.fields.length).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
  });
});

describe('Alertmanager', () => {
  test('fires with the v2 alert fields and resolves with the same labels', () => {
    const now = Date.parse('2026-01-02T03:04:05Z');
    const [firing] = alertmanagerAlerts(failed, now, 'prod');
    expect(firing).toEqual({
      labels: {
        alertname: 'ApplySetNotReady',
        cluster: 'prod',
        namespace: 'team-a',
        applyset: 'web',
        severity: 'critical',
      },
      annotations: expect.objectContaining({ summary: failed.summary, reason: 'ApplyFailed' }),
      startsAt: '2026-01-02T03:04:05.000Z',
    });
    const [resolved] = alertmanagerAlerts({ ...failed, state: 'recovered', severity: 'info' }, now, 'prod');
    expect(resolved?.['labels']).toEqual(firing?.['labels']);
    expect(resolved?.['endsAt']).toBe('2026-01-02T03:04:05.000Z');
  });
});

describe('generic webhook', () => {
  test('a receiver verifies the body with the key and the signed timestamp', () => {
    const { body, headers } = signedWebhook(failed, 'k3y', Date.parse('2026-01-02T03:04:05Z'), 'prod');
    expect(headers[TIMESTAMP_HEADER]).toBe('1767323045');
    const expected = Buffer.from(signatureOf('k3y', headers[TIMESTAMP_HEADER] ?? '', body));
    expect(timingSafeEqual(Buffer.from(headers[SIGNATURE_HEADER] ?? ''), expected)).toBe(true);
    expect(JSON.parse(body)).toMatchObject({
      applySet: { namespace: 'team-a', name: 'web' },
      state: 'failed',
    });
  });

  test('a changed body, an old timestamp or another key does not verify', () => {
    const { body, headers } = signedWebhook(failed, 'k3y', 1_767_323_045_000, 'prod');
    const signature = headers[SIGNATURE_HEADER];
    expect(signatureOf('k3y', headers[TIMESTAMP_HEADER] ?? '', body.replace('failed', 'applied'))).not.toBe(
      signature,
    );
    expect(signatureOf('k3y', '1767320000', body)).not.toBe(signature);
    expect(signatureOf('other', headers[TIMESTAMP_HEADER] ?? '', body)).not.toBe(signature);
  });
});
