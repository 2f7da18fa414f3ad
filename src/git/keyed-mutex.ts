/**
 * Runs async functions one at a time per key, in call order; different keys run concurrently. The
 * controller uses it so two ApplySets of one repository never fetch into its cache at the same time.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    // The tail only orders the next task: the outcome, error included, goes to this caller via `result`.
    const tail = result.then(ignoreOutcome, ignoreOutcome);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.#tails.size;
  }
}

function ignoreOutcome(): void {}
