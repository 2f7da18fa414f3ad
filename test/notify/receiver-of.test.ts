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

  // Issue #34: a channel fed by several clusters must tell them apart (--cluster-name).
  test.each([
    ['slack', (body: string) => JSON.parse(body).attachments[0].blocks[2].elements[0].text],
    ['msteams', (body: string) => JSON.stringify(JSON.parse(body).attachments[0].content.body[2].facts[0])],
    ['discord', (body: string) => JSON.stringify(JSON.parse(body).embeds[0].fields[0])],
    ['webhook', (body: string) => JSON.parse(body).cluster],
    ['alertmanager', (body: string) => JSON.parse(body)[0].labels.cluster],
    ['gitea', (body: string) => JSON.parse(body).context],
  ] as const)('a %s body names the cluster of --cluster-name', (provider, clusterIn) => {
    const receiver = receiverOf(config(provider), secret, {
      cluster: 'prod-eu-1',
      sourceUrl: 'https://forge.example/acme/deploy.git',
      now: () => 0,
    });
    if (!receiver.ok) throw new Error(receiver.problem);
    expect(String(clusterIn(receiver.receiver.delivery(event).body))).toContain('prod-eu-1');
  });

  // Issue #33: the platform's token marks only what the ClusterNotification lists.
  const platform = (repositories: string[]): NotificationConfig => ({
    ...config('gitea'),
    name: 'platform',
    acrossNamespaces: { names: [], matchLabels: {}, repositories },
  });
  test.each([
    ['forge.example/acme/deploy', 'https://forge.example/acme/deploy.git', true],
    ['forge.example/acme/*', 'https://Forge.example/ACME/deploy', true],
    ['forge.example/acme/*', 'git@forge.example:acme/deploy.git', true],
    ['forge.example/acme/*', 'https://forge.example/rival/deploy.git', false],
    ['forge.example/acme/*', 'https://forge.example/acme/sub/deploy.git', false],
    ['forge.example/acme/deploy', 'https://other.example/acme/deploy.git', false],
    ['forge.example:3000/acme/deploy', 'https://forge.example/acme/deploy.git', false],
  ] as const)('a ClusterNotification listing %s marks %s: %s', (entry, sourceUrl, marks) => {
    const receiver = receiverOf(platform([entry]), secret, context(sourceUrl));
    expect(receiver.ok).toBe(marks);
    if (!receiver.ok) {
      expect(receiver.problem).toContain(
        'ClusterNotification platform marks only the repositories its spec.repositories lists',
      );
      expect(receiver.problem).not.toContain(secret.token);
    }
  });

  test('a forge ClusterNotification that lists no repository marks nothing; a Notification needs no list', () => {
    expect(receiverOf(platform([]), secret, context('https://forge.example/acme/deploy.git'))).toEqual({
      ok: false,
      problem:
        'ClusterNotification platform marks only the repositories its spec.repositories lists, and it lists none; nothing is sent',
    });
    expect(receiverOf(config('gitea'), secret, context('https://forge.example/acme/deploy.git')).ok).toBe(
      true,
    );
  });
});
