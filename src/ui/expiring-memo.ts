import { LruMap } from '../kube/lru-map.js';

/**
 * Answers by key, each kept `ttlMs` from when it was first asked for and at most `maxEntries` of them
 * (the least recently used go first). The promise is what is kept, so callers asking at once share one
 * request; a promise that rejects is forgotten at once, so a failure is never served from memory.
 */
export class ExpiringMemo<V> {
  readonly #entries: LruMap<string, { readonly until: number; readonly value: Promise<V> }>;

  constructor(
    maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {
    this.#entries = new LruMap(maxEntries);
  }

  get(key: string, compute: () => Promise<V>): Promise<V> {
    const kept = this.#entries.get(key);
    if (kept !== undefined && kept.until > this.now()) return kept.value;
    const value = compute();
    const entry = { until: this.now() + this.ttlMs, value };
    this.#entries.set(key, entry);
    value.catch(() => {
      if (this.#entries.peek(key) === entry) this.#entries.delete(key);
    });
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
