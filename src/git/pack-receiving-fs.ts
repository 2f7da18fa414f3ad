import type { GitFetchLimits } from './git-fetch-limits.js';
import { GitRepositoryTooLargeError } from './git-error.js';
import { gitFs } from './git-fs.js';
import { scanPack, type PackScan } from './pack-scan.js';

/**
 * Thrown out of `git.fetch` when the received pack and its index are both written (packReceivingFs): the
 * fetch is then complete, isomorphic-git having written the refs and the shallow file before the pack,
 * and only its own indexing of the pack is skipped. fetchIndexed turns it back into a fetch that succeeded.
 */
export class PackIndexedHere extends Error {
  override readonly name = 'PackIndexedHere';

  constructor() {
    super('the fetched pack was indexed by the controller');
  }
}

/**
 * The file system of one fetch: gitFs, except for the pack isomorphic-git writes once it has received
 * it, which goes through scanPack first. A pack that breaks a limit is refused with
 * GitRepositoryTooLargeError before it is written (the library would index it next, inflating every
 * object whole), and nothing is kept.
 *
 * With `index`, the pack's `.idx` is made in the same pass and written beside it, and the write is then
 * refused with PackIndexedHere: the one way to keep isomorphic-git from indexing the pack a second time,
 * in JavaScript (its `fetch` writes the pack, then indexes it, and has no option to skip that). A pack
 * scanPack leaves to the library (a ref-delta, say) is written and handed back to it as before.
 */
export function packReceivingFs(
  url: string,
  limits: GitFetchLimits,
  options: { index: boolean },
): typeof gitFs {
  // isomorphic-git retries a failed write once (after creating the directory): the pack is scanned once,
  // and the retry of a pack already written and indexed is refused the same way.
  const scans = new WeakMap<object, Promise<PackScan>>();
  const indexed = new WeakSet<object>();
  return {
    ...gitFs,
    writeFile: async (...args: Parameters<typeof gitFs.writeFile>) => {
      const [file, data] = args;
      if (typeof file !== 'string' || !file.endsWith('.pack') || !(data instanceof Uint8Array)) {
        return gitFs.writeFile(...args);
      }
      if (indexed.has(data)) throw new PackIndexedHere();
      let scan = scans.get(data);
      if (scan === undefined) {
        scan = scanPack(data, limits, options);
        scans.set(data, scan);
      }
      const { refusal, index } = await scan;
      if (refusal !== undefined) throw new GitRepositoryTooLargeError(url, refusal);
      await gitFs.writeFile(...args);
      if (index === undefined) return;
      await gitFs.writeFile(file.replace(/\.pack$/, '.idx'), index);
      indexed.add(data);
      throw new PackIndexedHere();
    },
  };
}
