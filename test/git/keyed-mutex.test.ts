import { KeyedMutex } from '../../src/git/keyed-mutex.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('KeyedMutex', () => {
  it('runs tasks of one key one at a time, in call order', async () => {
    const mutex = new KeyedMutex();
    const events: string[] = [];
    const gate = deferred();
    const first = mutex.run('repo', async () => {
      events.push('first start');
      await gate.promise;
      events.push('first end');
      return 1;
    });
    const second = mutex.run('repo', async () => {
      events.push('second start');
      return 2;
    });
    await Promise.resolve();
    expect(events).toEqual(['first start']);
    gate.resolve();
    await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
    expect(events).toEqual(['first start', 'first end', 'second start']);
    expect(mutex.size).toBe(0);
  });

  it('runs tasks of different keys concurrently', async () => {
    const mutex = new KeyedMutex();
    const gate = deferred();
    const blocked = mutex.run('a', () => gate.promise);
    await expect(mutex.run('b', async () => 'b done')).resolves.toBe('b done');
    gate.resolve();
    await blocked;
  });

  it('goes on with the next task after one fails, and reports the failure to its own caller only', async () => {
    const mutex = new KeyedMutex();
    const failing = mutex.run('repo', async () => {
      throw new Error('boom');
    });
    const next = mutex.run('repo', async () => 'ok');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
  });
});
