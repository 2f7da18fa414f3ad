import type { InformerEvent } from '../../../src/kube/informer-cache.js';
import {
  startSupervisedInformer,
  type SupervisedInformerOptions,
} from '../../../src/kube/supervised-informer.js';
import { KubeApiError, KubeTransportError } from '../../../src/kube/kube-api-error.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { watchOnce, WatchStalledError } from '../../../src/kube/watch-once.js';
import type { JsonValue } from '../../../src/manifests/json-value.js';

const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined };
const item = (name: string, rv: string) => ({ metadata: { name, namespace: 'n', resourceVersion: rv } });

/** A LIST that answers from `lists` in turn, and a watch whose connections the test scripts. */
function fakeApi(lists: JsonValue[]) {
  const listCalls: number[] = [];
  const watches: {
    query: Readonly<Record<string, string>>;
    send: (type: string, object: unknown) => void;
    end: (error?: unknown) => void;
    signal: AbortSignal;
  }[] = [];
  const client: KubeClient = {
    server: 'https://fake',
    request: async () => {
      listCalls.push(1);
      return lists[Math.min(listCalls.length - 1, lists.length - 1)] ?? null;
    },
    watch: ({ query = {}, onEvent, onOpen, signal }) =>
      new Promise<void>((resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        onOpen?.();
        watches.push({
          query,
          send: onEvent,
          end: (error) => (error === undefined ? resolve() : reject(error)),
          signal,
        });
      }),
  };
  return { client, listCalls, watches };
}

/** The informer under test, on `api`'s collection `/x`, logging nothing. */
function startOn(
  api: ReturnType<typeof fakeApi>,
  options: Omit<SupervisedInformerOptions, 'client' | 'path' | 'logger'>,
) {
  return startSupervisedInformer({
    client: api.client,
    path: '/x',
    logger: silent,
    ...options,
  });
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
};

/** As until, with a deadline of `timeoutMs` (the backoff's waits are real). */
const longUntil = async (condition: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
};

describe('the supervised informer', () => {
  it('says a watch is open from its answer until it ends or fails', async () => {
    const api = fakeApi([{ metadata: { resourceVersion: '10' }, items: [item('a', '5')] }]);
    const stop = new AbortController();
    const informer = startOn(api, { signal: stop.signal, onEvent: () => undefined });
    expect(informer.isWatching()).toBe(false);
    await informer.synced;
    await until(() => api.watches.length === 1);
    expect(informer.isWatching()).toBe(true);
    api.watches[0]!.end(new KubeTransportError('GET', '/x', { cause: new Error('ECONNREFUSED') }));
    await until(() => !informer.isWatching());
    await longUntil(() => api.watches.length === 2, 10_000);
    expect(informer.isWatching()).toBe(true);
    stop.abort();
    await informer.done;
    expect(informer.isWatching()).toBe(false);
  });

  it('lists, watches from the list version, resumes after the server ends the watch, relists on 410 Gone', async () => {
    const api = fakeApi([
      { metadata: { resourceVersion: '10' }, items: [item('a', '5')] },
      { metadata: { resourceVersion: '30' }, items: [item('b', '25')] },
    ]);
    const events: InformerEvent[] = [];
    const stop = new AbortController();
    const informer = startOn(api, { signal: stop.signal, onEvent: (event) => events.push(event) });
    await informer.synced;
    await until(() => api.watches.length === 1);
    expect(api.watches[0]!.query['resourceVersion']).toBe('10');
    api.watches[0]!.send('MODIFIED', item('a', '12'));
    api.watches[0]!.send('BOOKMARK', { metadata: { resourceVersion: '15' } });
    api.watches[0]!.end();
    await until(() => api.watches.length === 2);
    expect(api.watches[1]!.query['resourceVersion']).toBe('15');

    api.watches[1]!.send('ERROR', { kind: 'Status', code: 410, message: 'too old resource version' });
    await until(() => api.watches.length === 3);
    expect(api.listCalls).toHaveLength(2);
    expect(api.watches[2]!.query['resourceVersion']).toBe('30');
    // The relist reports what changed while we were not watching: a gone, b new.
    expect(events.map((e) => `${e.type} ${String((e.object['metadata'] as { name: string }).name)}`)).toEqual(
      ['added a', 'modified a', 'added b', 'deleted a'],
    );
    expect(informer.list()).toHaveLength(1);
    stop.abort();
    await informer.done;
  });

  it('watches a server that went away again from its version, with backoff, and lists no more', async () => {
    const api = fakeApi([{ metadata: { resourceVersion: '7' }, items: [item('a', '5')] }]);
    const stop = new AbortController();
    const informer = startOn(api, { signal: stop.signal, onEvent: () => undefined });
    await until(() => api.watches.length === 1);
    const refused = () => new KubeTransportError('GET', '/x', { cause: new Error('connect ECONNREFUSED') });
    const times: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      const ended = Date.now();
      api.watches[attempt - 1]!.end(refused());
      await longUntil(() => api.watches.length === attempt + 1, 5_000);
      times.push(Date.now() - ended);
    }
    // 0.5 s doubling, jittered into [½, 1]: no retry at once, and no LIST however many fail.
    expect(times[0]).toBeGreaterThanOrEqual(200);
    expect(times[3]).toBeGreaterThanOrEqual(1_900);
    expect(api.watches.map((watch) => watch.query['resourceVersion'])).toEqual(['7', '7', '7', '7', '7']);
    expect(api.listCalls).toHaveLength(1);
    // Back, it delivers and ends the watch: resumed at once, the failures forgotten.
    api.watches[4]!.send('BOOKMARK', { metadata: { resourceVersion: '9' } });
    api.watches[4]!.end();
    await until(() => api.watches.length === 6);
    // A watch the server ends at once with nothing delivered is backed off, not resumed in a loop.
    const ended = Date.now();
    api.watches[5]!.end();
    await longUntil(() => api.watches.length === 7, 5_000);
    expect(Date.now() - ended).toBeGreaterThanOrEqual(200);
    expect(api.watches[6]!.query['resourceVersion']).toBe('9');
    expect(api.listCalls).toHaveLength(1);
    stop.abort();
    await informer.done;
  }, 20_000);

  it('restarts a watch the server did not end in time, from the version it delivered last', async () => {
    const api = fakeApi([{ metadata: { resourceVersion: '1' }, items: [] }]);
    const stop = new AbortController();
    const informer = startOn(api, {
      signal: stop.signal,
      stallTimeoutMs: 50,
      watchTimeoutSeconds: 1,
      onEvent: () => undefined,
    });
    await until(() => api.watches.length === 1);
    const started = Date.now();
    api.watches[0]!.send('BOOKMARK', { metadata: { resourceVersion: '2' } });
    await longUntil(() => api.watches.length >= 2, 5_000);
    // Silence is no stall: only the server's timeoutSeconds, passed by the grace, is.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(api.watches[0]!.query['timeoutSeconds']).toBe('1');
    expect(api.watches[0]!.signal.aborted).toBe(true);
    expect(api.watches[1]!.query['resourceVersion']).toBe('2');
    expect(api.listCalls).toHaveLength(1);
    stop.abort();
    await informer.done;
  });

  it('leaves a silent watch alone until its timeoutSeconds plus the stall timeout', async () => {
    const api = fakeApi([]);
    const started = Date.now();
    const watching = watchOnce(
      {
        watch: api.client.watch,
        path: '/x',
        signal: new AbortController().signal,
        stallTimeoutMs: 50,
        timeoutSeconds: 1,
        transform: (object) => object,
        logger: silent,
        onObject: () => undefined,
      },
      '7',
    );
    await until(() => api.watches.length === 1);
    api.watches[0]!.send('BOOKMARK', { metadata: { resourceVersion: '8' } });
    const stalled = await watching.catch((error: unknown) => error);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(stalled).toBeInstanceOf(WatchStalledError);
    expect(stalled).toMatchObject({
      message: 'the server did not end the watch within 1050 ms',
      resourceVersion: '8',
    });
    expect(api.watches[0]!.query).toMatchObject({ resourceVersion: '7', timeoutSeconds: '1' });
  });

  it('counts a collection that is missing as empty and synced when asked to, and waits for it otherwise', async () => {
    let lists = 0;
    const missing = (status: number): KubeClient => ({
      server: 'https://fake',
      request: () => {
        lists += 1;
        return Promise.reject(
          new KubeApiError('GET', '/x', status, 'NotFound', 'the server could not find it'),
        );
      },
      watch: () => Promise.reject(new Error('no watch of a missing collection')),
    });
    const stop = new AbortController();
    for (const status of [404, 403]) {
      const informer = startSupervisedInformer({
        client: missing(status),
        path: '/x',
        logger: silent,
        missingAsEmpty: true,
        signal: stop.signal,
        onEvent: () => undefined,
      });
      await informer.synced;
      expect(informer.list()).toEqual([]);
    }
    expect(lists).toBe(2);
    const strict = startSupervisedInformer({
      client: missing(404),
      path: '/x',
      logger: silent,
      signal: stop.signal,
      onEvent: () => undefined,
    });
    await until(() => lists >= 3);
    expect(strict.hasSynced()).toBe(false);
    stop.abort();
    await strict.done;
  });
});
