import { createBuildScheduler } from '../../src/builds/build-scheduler.js';

type BuildsHeldBackError = Error & { retryAfterMs(): number };

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A build the test finishes by hand, recording when it started. */
function gatedBuilds() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const build = (name: string) => () => {
    started.push(name);
    return new Promise<string>((resolve) => gates.set(name, () => resolve(name)));
  };
  const finish = async (name: string) => {
    gates.get(name)?.();
    await flush();
  };
  return { started, build, finish };
}

const request = (tenant: string, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) => ({
  tenant,
  timeoutMs: extra.timeoutMs ?? 60_000,
  signal: extra.signal ?? new AbortController().signal,
  timeoutError: () => new Error(`build of ${tenant} ran past its time limit`),
});

describe('the build scheduler', () => {
  it('serves tenants in turn: one with many builds delays another by one build at most', async () => {
    const scheduler = createBuildScheduler({ maxRunning: 1, maxRunningPerTenant: 1, now: () => 0 });
    const { started, build, finish } = gatedBuilds();
    const done = [1, 2, 3, 4].map((n) => scheduler.run(request('team-a'), build(`a${n}`)));
    await flush();
    const other = scheduler.run(request('team-b'), build('b1'));
    await flush();
    expect(started).toEqual(['a1']);
    expect(scheduler.counts()).toEqual({ queued: 4, running: 1 });
    await finish('a1');
    expect(started).toEqual(['a1', 'b1']);
    await finish('b1');
    await expect(other).resolves.toBe('b1');
    for (const name of ['a2', 'a3', 'a4']) await finish(name);
    await expect(Promise.all(done)).resolves.toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(scheduler.counts()).toEqual({ queued: 0, running: 0 });
  });

  it('runs at most the per-tenant cap of one tenant, leaving the other slots to the others', async () => {
    const scheduler = createBuildScheduler({ maxRunning: 3, maxRunningPerTenant: 2, now: () => 0 });
    const { started, build, finish } = gatedBuilds();
    for (const n of [1, 2, 3, 4]) void scheduler.run(request('team-a'), build(`a${n}`));
    await flush();
    expect(started).toEqual(['a1', 'a2']);
    void scheduler.run(request('team-b'), build('b1'));
    void scheduler.run(request('team-c'), build('c1'));
    await flush();
    expect(started).toEqual(['a1', 'a2', 'b1']);
    await finish('a1');
    expect(started).toEqual(['a1', 'a2', 'b1', 'c1']);
    for (const name of ['a2', 'b1', 'c1', 'a3', 'a4']) await finish(name);
    expect(started).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'a4']);
  });

  it('stops a build at its time limit and holds its tenant back, twice as long each time in a row', async () => {
    let now = 1_000_000;
    const scheduler = createBuildScheduler({
      maxRunning: 2,
      maxRunningPerTenant: 1,
      now: () => now,
      baseHoldMs: 10_000,
    });
    const hangs = ({ signal }: { signal: AbortSignal }) =>
      new Promise<string>((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason)),
      );
    await expect(scheduler.run(request('team-a', { timeoutMs: 20 }), hangs)).rejects.toThrow(
      'build of team-a ran past its time limit',
    );
    const refused = scheduler.run(request('team-a'), async () => 'never');
    await expect(refused).rejects.toMatchObject({ name: 'BuildsHeldBackError' });
    await expect(refused).rejects.toMatchObject({ intent: 'waiting', reason: 'BuildsHeldBack' });
    expect(((await refused.catch((error: unknown) => error)) as BuildsHeldBackError).retryAfterMs()).toBe(
      10_000,
    );
    // Another tenant is not held back.
    await expect(scheduler.run(request('team-b'), async () => 'built')).resolves.toBe('built');
    now += 10_001;
    await expect(scheduler.run(request('team-a', { timeoutMs: 20 }), hangs)).rejects.toThrow('time limit');
    const again = await scheduler
      .run(request('team-a'), async () => 'never')
      .catch((error: unknown) => error);
    expect((again as BuildsHeldBackError).retryAfterMs()).toBe(20_000);
    now += 20_001;
    // A build that finishes in time ends the hold and its count.
    await expect(scheduler.run(request('team-a'), async () => 'built')).resolves.toBe('built');
    await expect(scheduler.run(request('team-a', { timeoutMs: 20 }), hangs)).rejects.toThrow('time limit');
    const reset = await scheduler
      .run(request('team-a'), async () => 'never')
      .catch((error: unknown) => error);
    expect((reset as BuildsHeldBackError).retryAfterMs()).toBe(10_000);
  });

  it('drops a waiting build whose caller gives up, and serves the next', async () => {
    const scheduler = createBuildScheduler({ maxRunning: 1, maxRunningPerTenant: 1, now: () => 0 });
    const { started, build, finish } = gatedBuilds();
    void scheduler.run(request('team-a'), build('a1'));
    const caller = new AbortController();
    const dropped = scheduler.run(request('team-b', { signal: caller.signal }), build('b1'));
    void scheduler.run(request('team-c'), build('c1'));
    await flush();
    caller.abort(new Error('stopping'));
    await expect(dropped).rejects.toThrow('stopping');
    expect(scheduler.counts()).toEqual({ queued: 1, running: 1 });
    await finish('a1');
    expect(started).toEqual(['a1', 'c1']);
    await finish('c1');
    expect(scheduler.counts()).toEqual({ queued: 0, running: 0 });
  });
});
