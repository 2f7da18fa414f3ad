import { backoffDelayMs, jitteredIntervalMs } from '../../../src/api/requeue.js';
import type { QueueClock } from '../../../src/controller/runtime/key-timers.js';
import { createWorkQueue } from '../../../src/controller/runtime/work-queue.js';
import { type Requeue } from '../../../src/api/requeue.js';

/** A clock whose timers fire only when the test advances it. */
function fakeClock(): QueueClock & { advance(ms: number): Promise<void>; pending(): number[] } {
  let now = 0;
  let nextId = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    now: () => now,
    setTimer(callback, delayMs) {
      nextId += 1;
      timers.set(nextId, { at: now + delayMs, callback });
      return nextId;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    pending: () => [...timers.values()].map((timer) => timer.at - now).sort((a, b) => a - b),
    async advance(ms) {
      now += ms;
      for (const [id, timer] of [...timers]) {
        if (timer.at <= now) {
          timers.delete(id);
          timer.callback();
        }
      }
      await flush();
    },
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function deferred() {
  let resolve!: (value: Requeue) => void;
  const promise = new Promise<Requeue>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('requeue delays', () => {
  it.each([
    [1, 0, 500],
    [1, 0.999, 1000],
    [2, 0, 1000],
    [4, 0, 4000],
    [10, 0, 15_000],
    [100, 0.999, 30_000],
  ])('failure %i with random %d backs off %i ms (base 1 s, cap 30 s)', (failures, random, expected) => {
    expect(backoffDelayMs(failures, 1000, 30_000, random)).toBeCloseTo(expected, -2);
  });

  it('stretches the interval by up to a tenth, never shortens it', () => {
    expect(jitteredIntervalMs(60_000, 0)).toBe(60_000);
    expect(jitteredIntervalMs(60_000, 0.5)).toBe(63_000);
  });
});

describe('the work queue', () => {
  it('never processes one key twice at once, and runs it once more for adds that came meanwhile', async () => {
    const clock = fakeClock();
    const runs: string[] = [];
    const gates: ReturnType<typeof deferred>[] = [];
    const queue = createWorkQueue({
      concurrency: 4,
      clock,
      random: () => 0,
      process: (key) => {
        runs.push(key);
        const gate = deferred();
        gates.push(gate);
        return gate.promise;
      },
    });
    queue.start();
    queue.add('ns/a');
    await flush();
    queue.add('ns/a');
    queue.add('ns/a');
    await flush();
    expect(runs).toEqual(['ns/a']);
    gates[0]!.resolve({ kind: 'none' });
    await flush();
    await flush();
    expect(runs).toEqual(['ns/a', 'ns/a']);
  });

  it('coalesces adds of a key that waits for a worker, and bounds concurrency', async () => {
    const clock = fakeClock();
    let active = 0;
    let maxActive = 0;
    const runs: string[] = [];
    const gates: ReturnType<typeof deferred>[] = [];
    const queue = createWorkQueue({
      concurrency: 2,
      clock,
      random: () => 0,
      process: async (key) => {
        runs.push(key);
        active += 1;
        maxActive = Math.max(maxActive, active);
        const gate = deferred();
        gates.push(gate);
        const result = await gate.promise;
        active -= 1;
        return result;
      },
    });
    for (const key of ['a', 'b', 'c', 'c', 'c']) queue.add(key);
    expect(queue.depth()).toBe(3);
    queue.start();
    await flush();
    expect(runs).toEqual(['a', 'b']);
    gates.forEach((gate) => gate.resolve({ kind: 'none' }));
    await flush();
    await flush();
    expect(runs).toEqual(['a', 'b', 'c']);
    expect(maxActive).toBe(2);
  });

  it('requeues after the interval on success, backs off exponentially on failure, resets on success', async () => {
    const clock = fakeClock();
    const results: Requeue[] = [
      { kind: 'backoff', maxDelayMs: 60_000 },
      { kind: 'backoff', maxDelayMs: 60_000 },
      { kind: 'backoff', maxDelayMs: 60_000 },
      { kind: 'interval', intervalMs: 300_000 },
    ];
    let runs = 0;
    const queue = createWorkQueue({
      concurrency: 1,
      clock,
      random: () => 0.999,
      baseBackoffMs: 1000,
      process: async () => results[runs++] ?? { kind: 'none' },
    });
    queue.start();
    queue.add('k');
    await flush();
    await flush();
    const delays: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const [next] = clock.pending();
      delays.push(next!);
      await clock.advance(next!);
      await flush();
    }
    expect(delays.slice(0, 3).map((d) => Math.round(d / 100) * 100)).toEqual([1000, 2000, 4000]);
    expect(delays[3]).toBeGreaterThanOrEqual(300_000);
    expect(runs).toBe(5);
  });

  it('an add runs a scheduled key now, and forget drops its schedule', async () => {
    const clock = fakeClock();
    let runs = 0;
    const queue = createWorkQueue({
      concurrency: 1,
      clock,
      random: () => 0,
      process: async () => {
        runs += 1;
        return { kind: 'interval', intervalMs: 60_000 };
      },
    });
    queue.start();
    queue.add('k');
    await flush();
    await flush();
    expect(queue.scheduled()).toBe(1);
    queue.add('k');
    await flush();
    await flush();
    expect(runs).toBe(2);
    expect(clock.pending()).toEqual([60_000]);
    queue.forget('k');
    expect(queue.scheduled()).toBe(0);
    await clock.advance(120_000);
    expect(runs).toBe(2);
  });

  it('shutdown takes no new work and waits for the runs in progress', async () => {
    const clock = fakeClock();
    const gate = deferred();
    let finished = false;
    const queue = createWorkQueue({
      concurrency: 1,
      clock,
      random: () => 0,
      process: async () => {
        const result = await gate.promise;
        finished = true;
        return result;
      },
    });
    queue.start();
    queue.add('a');
    queue.add('b');
    await flush();
    const stopped = queue.shutdown();
    queue.add('c');
    let resolved = false;
    void stopped.then(() => {
      resolved = true;
    });
    await flush();
    expect(resolved).toBe(false);
    gate.resolve({ kind: 'interval', intervalMs: 1000 });
    await stopped;
    expect(finished).toBe(true);
    expect(clock.pending()).toEqual([]);
    expect(queue.depth()).toBe(0);
  });

  it('a process that throws is reported and backed off', async () => {
    const clock = fakeClock();
    const errors: unknown[] = [];
    const queue = createWorkQueue({
      concurrency: 1,
      clock,
      random: () => 0,
      baseBackoffMs: 1000,
      onError: (_key, error) => errors.push(error),
      process: async () => {
        throw new Error('boom');
      },
    });
    queue.start();
    queue.add('k');
    await flush();
    await flush();
    expect(errors).toHaveLength(1);
    expect(clock.pending()).toEqual([500]);
  });

  it('a run waiting away from its worker (a build) lets other keys through, then finishes first', async () => {
    const clock = fakeClock();
    const started: string[] = [];
    const build = deferred();
    const plain = deferred();
    const queue = createWorkQueue({
      concurrency: 1,
      clock,
      random: () => 0,
      process: async (key, worker) => {
        started.push(key);
        if (key === 'team-a/heavy') {
          await worker.away(() => build.promise);
          started.push(`${key} back`);
          return { kind: 'interval', intervalMs: 60_000 };
        }
        return plain.promise;
      },
    });
    queue.start();
    queue.add('team-a/heavy');
    queue.add('team-b/plain');
    queue.add('team-b/other');
    await flush();
    // The one worker went to team-b/plain while team-a/heavy waits for its build.
    expect(started).toEqual(['team-a/heavy', 'team-b/plain']);
    build.resolve({ kind: 'none' });
    await flush();
    // Its build done, the heavy run waits for the worker, and comes back before team-b/other starts.
    expect(started).toEqual(['team-a/heavy', 'team-b/plain']);
    plain.resolve({ kind: 'none' });
    await flush();
    await flush();
    expect(started).toEqual(['team-a/heavy', 'team-b/plain', 'team-a/heavy back', 'team-b/other']);
    await queue.shutdown();
  });
});
