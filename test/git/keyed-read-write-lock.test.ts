import { KeyedReadWriteLock } from '../../src/git/keyed-read-write-lock.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Lets every already-settled promise run its reactions. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('KeyedReadWriteLock', () => {
  it('runs writes of one key one at a time, in call order', async () => {
    const lock = new KeyedReadWriteLock();
    const events: string[] = [];
    const gate = deferred();
    const first = lock.run('repo', 'write', async () => {
      events.push('first start');
      await gate.promise;
      events.push('first end');
      return 1;
    });
    const second = lock.run('repo', 'write', async () => {
      events.push('second start');
      return 2;
    });
    await settle();
    expect(events).toEqual(['first start']);
    gate.resolve();
    await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
    expect(events).toEqual(['first start', 'first end', 'second start']);
    expect(lock.size).toBe(0);
  });

  it('runs reads of one key together', async () => {
    const lock = new KeyedReadWriteLock();
    const gate = deferred();
    const started: string[] = [];
    const reads = ['a', 'b', 'c'].map((name) =>
      lock.run('repo', 'read', async () => {
        started.push(name);
        await gate.promise;
        return name;
      }),
    );
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    gate.resolve();
    await expect(Promise.all(reads)).resolves.toEqual(['a', 'b', 'c']);
    expect(lock.size).toBe(0);
  });

  it('makes a write wait for the reads before it, and reads after it wait for the write', async () => {
    const lock = new KeyedReadWriteLock();
    const events: string[] = [];
    const readGate = deferred();
    const writeGate = deferred();
    const earlyRead = lock.run('repo', 'read', async () => {
      events.push('early read');
      await readGate.promise;
      events.push('early read end');
    });
    const write = lock.run('repo', 'write', async () => {
      events.push('write');
      await writeGate.promise;
      events.push('write end');
    });
    const lateRead = lock.run('repo', 'read', async () => {
      events.push('late read');
    });
    await settle();
    expect(events).toEqual(['early read']);
    readGate.resolve();
    await settle();
    expect(events).toEqual(['early read', 'early read end', 'write']);
    writeGate.resolve();
    await Promise.all([earlyRead, write, lateRead]);
    expect(events).toEqual(['early read', 'early read end', 'write', 'write end', 'late read']);
  });

  it('runs tasks of different keys concurrently', async () => {
    const lock = new KeyedReadWriteLock();
    const gate = deferred();
    const blocked = lock.run('a', 'write', () => gate.promise);
    await expect(lock.run('b', 'write', async () => 'b done')).resolves.toBe('b done');
    gate.resolve();
    await blocked;
  });

  it('goes on with the next task after one fails, and reports the failure to its own caller only', async () => {
    const lock = new KeyedReadWriteLock();
    const failing = lock.run('repo', 'write', async () => {
      throw new Error('boom');
    });
    const next = lock.run('repo', 'read', async () => 'ok');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
    expect(lock.size).toBe(0);
  });
});
