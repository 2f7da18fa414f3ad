/**
 * The objects of a pack resolved last, by offset, up to a total of bytes, the oldest dropped first. A
 * delta's base is most often a few entries before it (git packs within a window of 10 objects), so the
 * most recent are the ones to keep, and a read does not reorder them; a base dropped is inflated again.
 */
import type { PackObject } from './pack-format.js';

export class RecentObjects {
  readonly #objects = new Map<number, PackObject>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(offset: number): PackObject | undefined {
    return this.#objects.get(offset);
  }

  set(offset: number, object: PackObject): void {
    if (this.#objects.has(offset)) return;
    this.#objects.set(offset, object);
    this.#bytes += object.content.length;
    for (const [oldest, kept] of this.#objects) {
      if (this.#bytes <= this.maxBytes) break;
      this.#objects.delete(oldest);
      this.#bytes -= kept.content.length;
    }
  }
}
