import type { NotificationEvent } from '../../src/notify/notification-event.js';
import type { NotificationConfig } from '../../src/notify/notification-spec.js';
import { receiverOf } from '../../src/notify/receiver-of.js';

const event: NotificationEvent = {
  namespace: 'team-a',
  name: 'web',
  topic: 'sync',
  state: 'applied',
  severity: 'info',
  reason: 'Applied',
  revision: `main@sha1:${'a'.repeat(40)}`,
  summary: 'applied',
  details: [],
};

const config = (provider: NotificationConfig['provider']): NotificationConfig => ({
  namespace: 'team-a',
  name: 'commits',
  applySetNames: [],
  matchLabels: {},
  severities: [],
  states: [],
  provider,
  secretName: 'forge',
});

const secret = { address: 'https://forge.example', token: 't0k' };
const context = (sourceUrl: string | undefined) => ({ cluster: 'prod', sourceUrl, now: () => 0 });

describe('receiverOf', () => {
  test.each([
    ['github', undefined],
    ['gitlab', 'https://forge.example/only-one-segment'],
    ['gitea', 'not a url'],
  ] as const)(
    'a %s commit status on an ApplySet whose source names no repository (%s) sends nothing',
    (provider, sourceUrl) => {
      const receiver = receiverOf(config(provider), secret, context(sourceUrl));
      expect(receiver).toEqual({ ok: false, problem: expect.stringContaining('nothing is sent') as string });
    },
  );

  test('a forge provider with a repository marks the commit, at the forge API', () => {
    const receiver = receiverOf(config('gitea'), secret, context('https://forge.example/acme/deploy.git'));
    if (!receiver.ok) throw new Error(receiver.problem);
    expect(receiver.receiver.wants(event)).toBe(true);
    expect(receiver.receiver.delivery(event).url).toBe(
      `https://forge.example/api/v1/repos/acme/deploy/statuses/${'a'.repeat(40)}`,
    );
    expect(receiver.receiver.wants({ ...event, topic: 'drift', state: 'driftDetected' })).toBe(false);
  });

  test('a chat provider needs no repository', () => {
    const receiver = receiverOf(config('slack'), secret, context(undefined));
    if (!receiver.ok) throw new Error(receiver.problem);
    expect(receiver.receiver.delivery(event).url).toBe('https://forge.example');
  });
});
