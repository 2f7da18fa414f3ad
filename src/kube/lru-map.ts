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
  #totalWeight = 0;
  readonly #onEvict: ((key: K, value: V) => void) | undefined;

  /**
   * `maxWeight` bounds the sum of the weights given with setWeight (bytes, say) as `maxEntries` bounds
   * their number: past either, the least recently used entries go. `onEvict` is told of each entry
   * the bound drops (not of a delete or a replacing set), so a value holding a resource (a connection)
   * can release it.
   */
  constructor(
    maxEntries: number,
    options: { readonly maxWeight?: number; readonly onEvict?: (key: K, value: V) => void } = {},
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`an LRU map holds at least one entry, not ${maxEntries}`);
    }
    this.#maxEntries = maxEntries;
    this.#maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
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
    this.#shrink();
    return this;
  }

  /**
   * Weighs an entry once its weight is known (a document's size once downloaded); the least recently
   * used entries go while the total is over `maxWeight`. The last entry stays even if it alone is over:
   * dropping it would only have the next lookup fetch it again.
   */
  setWeight(key: K, weight: number): void {
    if (!this.#entries.has(key)) return;
    this.#totalWeight += weight - (this.#weights.get(key) ?? 0);
    this.#weights.set(key, weight);
    this.#shrink();
  }

  delete(key: K): boolean {
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
