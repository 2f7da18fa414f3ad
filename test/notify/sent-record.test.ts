import type { JsonValue } from '../../src/manifests/json-value.js';
import { commitStateOf } from '../../src/notify/commit-status-provider.js';
import { applyingEvent, type NotificationEvent } from '../../src/notify/notification-event.js';
import {
  lastSyncRevision,
  recordsApplySet,
  sentRecordOf,
  syncStateIn,
  wasSent,
} from '../../src/notify/sent-record.js';

const set = { namespace: 'team-a', name: 'web' };
const revision = 'main@sha1:1111111111111111111111111111111111111111';

const notificationWith = (lastSent: JsonValue): JsonValue => ({
  metadata: { name: 'forge' },
  status: { lastSent },
});

const event = (state: NotificationEvent['state'], at = revision): NotificationEvent => ({
  ...set,
  topic: 'sync',
  state,
  severity: 'info',
  reason: 'X',
  revision: at,
  summary: '',
  details: [],
});

describe('sentRecordOf and wasSent', () => {
  const record = sentRecordOf(
    notificationWith({
      'team-a/web/sync': { state: 'failed', revision, sentAt: '2026-01-01T00:00:00Z' },
      'team-a/web/drift': 'not an entry',
    }),
  );

  test('a state sent at a revision is not sent again; another state or revision is', () => {
    expect(wasSent(record, event('failed'))).toBe(true);
    expect(wasSent(record, event('applied'))).toBe(false);
    expect(wasSent(record, event('failed', 'main@sha1:2222222222222222222222222222222222222222'))).toBe(
      false,
    );
  });

  test('a recovery sent reads as the apply of that revision', () => {
    const recovered = sentRecordOf(notificationWith({ 'team-a/web/sync': { state: 'recovered', revision } }));
    expect(wasSent(recovered, event('applied'))).toBe(true);
  });

  test('the last sync state and revision, for pending marks and recoveries after a restart', () => {
    expect(syncStateIn(record, 'team-a', 'web')).toBe('failed');
    expect(lastSyncRevision(record, 'team-a', 'web')).toBe(revision);
    expect(syncStateIn(record, 'team-a', 'other')).toBeUndefined();
    expect(recordsApplySet(record, 'team-a', 'web')).toBe(true);
    expect(recordsApplySet(record, 'team-a', 'we')).toBe(false);
  });

  test('a Notification without status, or with a malformed one, has sent nothing', () => {
    expect(sentRecordOf({ metadata: {} }).size).toBe(0);
    expect(sentRecordOf(notificationWith(['x'])).size).toBe(0);
    expect(
      syncStateIn(sentRecordOf(notificationWith({ 'team-a/web/sync': { state: 'bogus' } })), 'team-a', 'web'),
    ).toBe(undefined);
  });
});

describe('applyingEvent', () => {
  test('an apply under way is a sync event a forge marks pending', () => {
    const applying = applyingEvent(set, revision);
    expect(applying).toMatchObject({ topic: 'sync', state: 'progressing', revision });
    expect(commitStateOf(applying.state)).toBe('pending');
  });
});
