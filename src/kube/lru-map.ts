/**
 * A Map with a size bound: past `maxEntries`, the entry used least recently goes. Pure (no IO, no
 * clock). The controller lives for months, so every cache keyed by something the fleet chooses
 * (group-versions named in manifests, OpenAPI documents, identities, objects) is one of these rather
 * than a plain Map that only grows. A Map iterates in insertion order, so re-inserting an entry on use
 * keeps the least recently used first.
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`an LRU map holds at least one entry, not ${maxEntries}`);
    }
    this.#maxEntries = maxEntries;
  }

  /** The value, which becomes the most recently used. */
  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** The value without counting it as a use. */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Sets the value as the most recently used, and drops the least recently used past the bound. */
  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
