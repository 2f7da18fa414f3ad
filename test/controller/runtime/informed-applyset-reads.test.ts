import type { ApplySet } from '../../../src/api/applyset-types.js';
import { withInformedReads } from '../../../src/controller/runtime/informed-applyset-reads.js';
import { informerView } from '../../../src/controller/runtime/informer-view.js';
import type { ApplySetApi, StatusWrite } from '../../../src/kube/applyset-api.js';
import type { JsonObject } from '../../../src/manifests/json-value.js';

// Step 1's read (issue #39): the informer's copy stands in for a GET only when it is whole and either at
// the resourceVersion the API server last answered this controller or of a set not read here yet. The
// API below is the server's side of it, scripted: which version a GET or a write answers, and how many
// GETs were sent.

const KEY = 'team-a/web';

function applySet(resourceVersion: string, annotations: Record<string, string> = {}): ApplySet {
  return {
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: {
      name: 'web',
      namespace: 'team-a',
      resourceVersion,
      annotations: { 'kubectl.kubernetes.io/last-applied-objects': 'team-a::ConfigMap:a', ...annotations },
    },
    spec: { source: { url: 'https://git.example/repo.git' } },
  } as unknown as ApplySet;
}

function scripted() {
  const server = {
    served: applySet('1'),
    gets: 0,
    status: { kind: 'written', resourceVersion: '3' } as StatusWrite,
  };
  const api: ApplySetApi = {
    get: () => {
      server.gets += 1;
      return Promise.resolve(server.served);
    },
    setFinalizers: (_applySet, finalizers) =>
      Promise.resolve({
        ...applySet('2'),
        metadata: { ...applySet('2').metadata, finalizers: [...finalizers] },
      }),
    setAnnotation: () => Promise.resolve(applySet('2')),
    writeStatus: () => Promise.resolve(server.status),
    serviceAccountExists: () => Promise.resolve(true),
  };
  const informer = new Map<string, JsonObject>();
  const watching = { open: true };
  const informed = withInformedReads(api);
  informed.readFrom({ get: (key) => informer.get(key), isWatching: () => watching.open });
  const watch = (served: ApplySet) => informer.set(KEY, informerView(served as unknown as JsonObject));
  const deleted = () => {
    informer.delete(KEY);
    informed.forget(KEY);
  };
  return { server, informed, watch, watching, deleted };
}

const signal = new AbortController().signal;

describe('withInformedReads', () => {
  it('reads a set not read here yet from its whole copy, and again while no one has written it', async () => {
    const { server, informed, watch } = scripted();
    watch(server.served);
    expect((await informed.get('team-a', 'web', signal))?.metadata.resourceVersion).toBe('1');
    expect(server.gets).toBe(0);
    const read = await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(0);
    expect(read).toEqual({ ...server.served });
    // A copy of its own: the run may change what it read without changing the informer's.
    (read?.metadata.annotations as Record<string, string>)['changed'] = 'by the run';
    expect((await informed.get('team-a', 'web', signal))?.metadata.annotations?.['changed']).toBeUndefined();
  });

  it('reads by GET when the watch has not caught up with our write, or has seen another', async () => {
    const { server, informed, watch } = scripted();
    watch(server.served);
    await informed.get('team-a', 'web', signal);
    // Our status write answered version 3; the watch still holds 1.
    await informed.writeStatus(server.served, {}, '1', signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(1);
    // Someone else's edit, seen by the watch: 4 was never answered to us.
    server.served = applySet('4');
    watch(applySet('4'));
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
  });

  it('reads by GET after a run wrote the set unanswered, from a copy first read at a version', async () => {
    const { server, informed, watch } = scripted();
    watch(server.served);
    await informed.get('team-a', 'web', signal);
    // The engine's inventory patch, not through these calls: the watch brings version 2.
    server.served = applySet('2');
    watch(server.served);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(1);
  });

  it('reads by GET once a GET found nothing, though the watch still holds the copy', async () => {
    const { server, informed, watch, deleted } = scripted();
    watch(applySet('5'));
    server.served = undefined as unknown as ApplySet;
    server.status = { kind: 'gone' };
    // A status write found the set gone; the watch has not delivered the deletion.
    await informed.writeStatus(applySet('5'), {}, '5', signal);
    await informed.get('team-a', 'web', signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
    // The deletion seen, a set of that name created again is new: its copy is read.
    deleted();
    server.served = applySet('9');
    watch(server.served);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
  });

  it('takes the version of its own writes, and forgets a conflict and a deleted set', async () => {
    const { server, informed, watch, deleted } = scripted();
    watch(applySet('2'));
    await informed.setFinalizers(applySet('1'), ['applyset.dev/finalizer'], signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(0);
    watch(applySet('3'));
    await informed.writeStatus(applySet('2'), {}, '2', signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(0);
    server.status = { kind: 'conflict' };
    await informed.writeStatus(applySet('3'), {}, '3', signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(1);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
    deleted();
    server.served = applySet('3');
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(3);
  });

  it('reads by GET while no watch is open: the API server may be away, or have changed it meanwhile', async () => {
    const { server, informed, watch, watching } = scripted();
    watch(server.served);
    watching.open = false;
    await informed.get('team-a', 'web', signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
    watching.open = true;
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
  });

  it('reads a set too large to cache whole by GET, whatever its version', async () => {
    const { server, informed, watch } = scripted();
    server.served = applySet('1', {
      'kubectl.kubernetes.io/last-applied-objects': 'team-a::ConfigMap:a\n'.repeat(500),
    });
    watch(server.served);
    await informed.get('team-a', 'web', signal);
    await informed.get('team-a', 'web', signal);
    expect(server.gets).toBe(2);
  });
});
