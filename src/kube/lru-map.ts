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
  /** Entries with a weight (setWeight); an entry without one weighs nothing. */
  readonly #weights = new Map<K, number>();
  readonly #maxWeight: number;
  /** Each entry's weight from its value (the `weigh` option), instead of setWeight's map of weights. */
  readonly #weigh: ((value: V) => number) | undefined;
  #totalWeight = 0;
  readonly #onEvict: ((key: K, value: V) => void) | undefined;

  /**
   * `maxWeight` bounds the sum of the weights given with setWeight (bytes, say) as `maxEntries` bounds
   * their number: past either, the least recently used entries go. `onEvict` is told of each entry
   * the bound drops (not of a delete or a replacing set), so a value holding a resource (a connection)
   * can release it. `weigh` weighs each entry from its value when it is set, for a map whose weights are
   * known then: nothing is kept per entry for its weight (setWeight keeps a map of them), which counts
   * where entries are small and many.
   */
  constructor(
    maxEntries: number,
    options: {
      readonly maxWeight?: number;
      readonly weigh?: (value: V) => number;
      readonly onEvict?: (key: K, value: V) => void;
    } = {},
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`an LRU map holds at least one entry, not ${maxEntries}`);
    }
    this.#maxEntries = maxEntries;
    this.#maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
    this.#weigh = options.weigh;
    this.#onEvict = options.onEvict;
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
    this.delete(key);
    this.#entries.set(key, value);
    if (this.#weigh !== undefined) this.#totalWeight += this.#weigh(value);
    this.#shrink();
    return this;
  }

  /**
   * Weighs an entry once its weight is known (a document's size once downloaded); the least recently
   * used entries go while the total is over `maxWeight`. The last entry stays even if it alone is over:
   * dropping it would only have the next lookup fetch it again. Not for a map given `weigh`.
   */
  setWeight(key: K, weight: number): void {
    if (this.#weigh !== undefined) throw new TypeError('this map weighs its entries by their values');
    if (!this.#entries.has(key)) return;
    this.#totalWeight += weight - (this.#weights.get(key) ?? 0);
    this.#weights.set(key, weight);
    this.#shrink();
  }

  delete(key: K): boolean {
    if (this.#weigh !== undefined) {
      if (!this.#entries.has(key)) return false;
      this.#totalWeight -= this.#weigh(this.#entries.get(key) as V);
      return this.#entries.delete(key);
    }
    this.#totalWeight -= this.#weights.get(key) ?? 0;
    this.#weights.delete(key);
    return this.#entries.delete(key);
  }

  #shrink(): void {
    for (;;) {
      const overWeight = this.#totalWeight > this.#maxWeight && this.#entries.size > 1;
      if (this.#entries.size <= this.#maxEntries && !overWeight) break;
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      const value = this.#entries.get(oldest.value) as V;
      this.delete(oldest.value);
      this.#onEvict?.(oldest.value, value);
    }
  }

  /** The keys, least recently used first; an entry may be deleted while they are read. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  get size(): number {
    return this.#entries.size;
  }
}
