import type { JsonValue } from '../../src/manifests/json-value.js';
import {
  reachesNamespace,
  readClusterNotification,
  readNotification,
  receiverIdOf,
} from '../../src/notify/notification-spec.js';

const provider = { type: 'slack', secretRef: { name: 'platform-hook' } };

describe('ClusterNotification', () => {
  test('reads its namespace selector, and keeps its Secret in the controller namespace', () => {
    const read = readClusterNotification(
      {
        metadata: { name: 'platform' },
        spec: { namespaces: { names: ['team-a'], matchLabels: { team: 'a' } }, provider },
      },
      'applyset-system',
    );
    if (!read.ok) throw new Error(read.problem);
    expect(read.config).toMatchObject({
      namespace: 'applyset-system',
      secretName: 'platform-hook',
      acrossNamespaces: { names: ['team-a'], matchLabels: { team: 'a' } },
    });
    expect(receiverIdOf(read.config)).toBe('ClusterNotification/platform');
  });

  test('reaches the namespaces its names and labels select; empty selects every one', () => {
    const config = (namespaces: JsonValue) => {
      const read = readClusterNotification(
        { metadata: { name: 'p' }, spec: { namespaces, provider } },
        'sys',
      );
      if (!read.ok) throw new Error(read.problem);
      return read.config;
    };
    const teamA = { name: 'team-a', labels: { team: 'a' } };
    const teamB = { name: 'team-b', labels: { team: 'b' } };
    const byLabel = config({ matchLabels: { team: 'a' } });
    expect([reachesNamespace(byLabel, teamA), reachesNamespace(byLabel, teamB)]).toEqual([true, false]);
    const byName = config({ names: ['team-b'] });
    expect([reachesNamespace(byName, teamA), reachesNamespace(byName, teamB)]).toEqual([false, true]);
    const both = config({ names: ['team-b'], matchLabels: { team: 'a' } });
    expect([reachesNamespace(both, teamA), reachesNamespace(both, teamB)]).toEqual([false, false]);
    const every = config({});
    expect([reachesNamespace(every, teamA), reachesNamespace(every, teamB)]).toEqual([true, true]);
  });

  test('a Notification reaches its own namespace only', () => {
    const read = readNotification({ metadata: { name: 'chat', namespace: 'team-a' }, spec: { provider } });
    if (!read.ok) throw new Error(read.problem);
    expect(reachesNamespace(read.config, { name: 'team-a', labels: {} })).toBe(true);
    expect(reachesNamespace(read.config, { name: 'team-b', labels: {} })).toBe(false);
    expect(receiverIdOf(read.config)).toBe('team-a/chat');
  });
});
