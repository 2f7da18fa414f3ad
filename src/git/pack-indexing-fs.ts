import type { gitFs } from './git-fs.js';
import { indexPack } from './pack-index.js';

/**
 * Thrown out of `git.fetch` when the received pack and its index are both written (packIndexingFs): the
 * fetch is then complete, isomorphic-git having written the refs and the shallow file before the pack,
 * and only its own indexing of the pack is skipped. fetchPack turns it back into a fetch that succeeded.
 */
export class PackIndexedHere extends Error {
  override readonly name = 'PackIndexedHere';

  constructor() {
    super('the fetched pack was indexed by the controller');
  }
}

/**
 * The file system of one fetch, over `inner` (which checks the pack's limits): a pack the library writes
 * is written, indexed by indexPack and its `.idx` written beside it, and then the write is refused with
 * PackIndexedHere, the one way to keep isomorphic-git from indexing the pack a second time, in
 * JavaScript (its `fetch` writes the pack, then indexes it, and has no option to skip that). A pack
 * indexPack leaves to the library (a ref-delta, say) is written and handed back to it as before.
 */
export function packIndexingFs(inner: typeof gitFs): typeof gitFs {
  // isomorphic-git retries a failed write once (after creating the directory): the retry of a pack
  // already written and indexed is refused the same way.
  const indexed = new WeakSet<object>();
  return {
    ...inner,
    writeFile: async (...args: Parameters<typeof gitFs.writeFile>) => {
      const [file, data] = args;
      if (typeof file !== 'string' || !file.endsWith('.pack') || !(data instanceof Uint8Array)) {
        return inner.writeFile(...args);
      }
      if (indexed.has(data)) throw new PackIndexedHere();
      await inner.writeFile(...args);
      const index = await indexPack(data);
      if (index === undefined) return;
      await inner.writeFile(file.replace(/\.pack$/, '.idx'), index);
      indexed.add(data);
      throw new PackIndexedHere();
    },
  };
}
