/**
 * The objects of one repository's packs, read with Node's zlib. isomorphic-git's `readObject` took
 * 85-96 µs of CPU per object of a 50,000-object pack, most of it its own steps around the read (pako's
 * inflate, copies, a cache lookup per call); a first reconcile reads each of its files so, as does every
 * reconcile after a restart or a new commit. Here a read is a binary search of the pack's index and the
 * entry inflated, its delta bases first (docs/performance.md).
 *
 * The packs and their indexes are read from disk once, on the first read that needs them, and kept for
 * the store's life: a RepositoryReadCache's, from one fetch of the repository to the next, under its
 * budget, as isomorphic-git's own cache of packs was. An object no pack holds (a loose one, or none)
 * is answered with undefined, for the caller to ask isomorphic-git; so is one whose entry does not
 * read back (a damaged pack), which the library then reports in its own words.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { hasErrorCode } from './has-error-code.js';
import {
  applyDelta,
  inflatePackEntry,
  OID_BYTES,
  PACK_OBJECT_TYPES,
  readPackEntryHeader,
  type PackObject,
} from './pack-format.js';
import { RecentObjects } from './recent-objects.js';

/** What the delta bases kept per pack may weigh. */
const BASE_CACHE_BYTES = 4 * 1024 * 1024;

/** A delta chain longer than this is not followed (git's own default depth is 50). */
const MAX_DELTA_DEPTH = 4096;

export interface PackObjectStore {
  read(oid: string): Promise<PackObject | undefined>;
}

interface Pack {
  readonly index: Buffer;
  readonly count: number;
  readonly packFile: string;
  data: Promise<Buffer> | undefined;
  readonly bases: RecentObjects;
}

export function createPackObjectStore(gitdir: string): PackObjectStore {
  const packDir = path.join(gitdir, 'objects', 'pack');
  let packs: Promise<Pack[]> | undefined;
  const loadPacks = async (): Promise<Pack[]> => {
    let names: string[];
    try {
      names = await readdir(packDir);
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT')) return [];
      throw error;
    }
    const indexes = names.filter((name) => name.endsWith('.idx')).sort();
    const loaded = await Promise.all(
      indexes.map(async (name): Promise<Pack | undefined> => {
        const index = await readFile(path.join(packDir, name));
        // Version 2 only (what git, isomorphic-git and scanPack write); another is left to the library.
        if (
          index.length < 8 + 256 * 4 ||
          index.readUInt32BE(0) !== 0xff744f63 ||
          index.readUInt32BE(4) !== 2
        ) {
          return undefined;
        }
        return {
          index,
          count: index.readUInt32BE(8 + 255 * 4),
          packFile: path.join(packDir, name.replace(/\.idx$/, '.pack')),
          data: undefined,
          bases: new RecentObjects(BASE_CACHE_BYTES),
        };
      }),
    );
    return loaded.filter((pack) => pack !== undefined);
  };

  const read = async (oid: string, depth: number): Promise<PackObject | undefined> => {
    if (depth > MAX_DELTA_DEPTH || !/^[0-9a-f]{40}$/.test(oid)) return undefined;
    packs ??= loadPacks().catch((error: unknown) => {
      packs = undefined;
      throw error;
    });
    const wanted = Buffer.from(oid, 'hex');
    for (const pack of await packs) {
      const offset = offsetOf(pack, wanted);
      if (offset === undefined) continue;
      pack.data ??= readFile(pack.packFile).catch((error: unknown) => {
        pack.data = undefined;
        throw error;
      });
      return readAt(pack, await pack.data, offset, depth);
    }
    return undefined;
  };

  /** The object at `offset` of the pack: inflated, and a delta applied to its base (read first). */
  const readAt = async (
    pack: Pack,
    data: Buffer,
    offset: number,
    depth: number,
  ): Promise<PackObject | undefined> => {
    const kept = pack.bases.get(offset);
    if (kept !== undefined) return kept;
    const header = readPackEntryHeader(data, offset);
    const kind = header === undefined ? undefined : PACK_OBJECT_TYPES[header.type];
    if (header === undefined || kind === undefined) return undefined;
    const own = inflatePackEntry(data, header.dataOffset, header.size)?.data;
    if (own === undefined) return undefined;
    let object: PackObject | undefined;
    if (kind === 'ofs-delta' || kind === 'ref-delta') {
      const base =
        kind === 'ofs-delta'
          ? await readAt(pack, data, offset - (header.baseDistance ?? offset + 1), depth + 1)
          : await read(data.toString('hex', header.dataOffset - OID_BYTES, header.dataOffset), depth + 1);
      const content = base === undefined ? undefined : applyDelta(base.content, own);
      object = content === undefined || base === undefined ? undefined : { type: base.type, content };
    } else {
      object = { type: kind, content: own };
    }
    // Kept as a base for the next read: a delta's base is read again by the deltas of its neighbours.
    if (object !== undefined) pack.bases.set(offset, object);
    return object;
  };

  return { read: (oid) => read(oid, 0) };
}

/** Where the pack holds the object, by a binary search of its index's sorted oids. */
function offsetOf(pack: Pack, oid: Buffer): number | undefined {
  const { index, count } = pack;
  const first = oid[0]!;
  let low = first === 0 ? 0 : index.readUInt32BE(8 + (first - 1) * 4);
  let high = index.readUInt32BE(8 + first * 4);
  const oidsAt = 8 + 256 * 4;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = oidsAt + middle * OID_BYTES;
    const order = index.compare(oid, 0, OID_BYTES, at, at + OID_BYTES);
    if (order === 0) {
      const offsetsAt = oidsAt + count * (OID_BYTES + 4);
      const small = index.readUInt32BE(offsetsAt + middle * 4);
      if ((small & 0x80000000) === 0) return small;
      // Past 2 GiB: the 8-byte table after the 4-byte one.
      const largeAt = offsetsAt + count * 4 + (small & 0x7fffffff) * 8;
      return index.readUInt32BE(largeAt) * 2 ** 32 + index.readUInt32BE(largeAt + 4);
    }
    if (order > 0) high = middle;
    else low = middle + 1;
  }
  return undefined;
}
