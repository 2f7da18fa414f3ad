/**
 * A readers-writer lock per key: reads of one key run together, a write runs alone, and both wait in
 * call order, so a waiting write is never starved by reads that keep arriving after it. The Git
 * source takes it per repository: fetches write the cache (isomorphic-git's writes are not safe to
 * interleave, and a fetch may start the cache over), while the reads of a thousand ApplySets of one
 * repository only read its objects and need not queue behind one another.
 */
export type LockMode = 'read' | 'write';

interface Waiter {
  readonly mode: LockMode;
  readonly start: () => void;
}

interface KeyState {
  readers: number;
  writing: boolean;
  readonly waiting: Waiter[];
}

export class KeyedReadWriteLock {
  readonly #keys = new Map<string, KeyState>();

  /** Runs `task` once the lock of `key` is held in `mode`; the lock is released however it ends. */
  async run<T>(key: string, mode: LockMode, task: () => Promise<T>): Promise<T> {
    const state = this.#state(key);
    await new Promise<void>((start) => {
      state.waiting.push({ mode, start });
      this.#grant(key, state);
    });
    try {
      return await task();
    } finally {
      if (mode === 'read') state.readers -= 1;
      else state.writing = false;
      this.#grant(key, state);
    }
  }

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.#keys.size;
  }

  #state(key: string): KeyState {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { readers: 0, writing: false, waiting: [] };
      this.#keys.set(key, state);
    }
    return state;
  }

  /** Starts waiters from the front while they may run: any number of reads, or one write alone. */
  #grant(key: string, state: KeyState): void {
    for (let next = state.waiting[0]; next !== undefined; next = state.waiting[0]) {
      if (state.writing) break;
      if (next.mode === 'write' && state.readers > 0) break;
      state.waiting.shift();
      if (next.mode === 'write') state.writing = true;
      else state.readers += 1;
      next.start();
    }
    if (!state.writing && state.readers === 0 && state.waiting.length === 0) this.#keys.delete(key);
  }
}
