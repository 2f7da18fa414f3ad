/**
 * One pass over a received pack: its limits checked, and its index (`.idx`, version 2) made with Node's
 * zlib and crypto when asked for.
 *
 * The limits come first. A tenant's server can send an entry whose header declares any size over any
 * data, so each entry's declared size is checked before a byte of it is inflated, a delta's result size
 * (the second number of its inflated data) before it is applied, and no stream is inflated past the
 * size it declared. At most one entry of `maxObjectBytes` is inflated at a time, besides the bases kept
 * for the deltas that follow them (32 MiB).
 *
 * The index replaces isomorphic-git's own: the library indexes a fetched pack in JavaScript, every
 * object inflated by pako, hashed through WebCrypto one promise at a time, and the fan-out table counted
 * with a pass over all oids for each of its 256 rows. For a repository of 50,000 objects (10,000
 * ApplySets of four files) that took 12.7 s of CPU and held the event loop for 5.4 s at a stretch
 * (docs/performance.md). Here both take one pass, with the event loop let go every few milliseconds.
 *
 * The index's format (`Documentation/gitformat-pack.txt`): a magic number and version 2, a fan-out table
 * of 256 counts (objects whose oid's first byte is at most i), the oids sorted, each one's CRC-32 of its
 * raw entry, each one's offset in the pack, the pack's checksum and the index's own. The result is byte
 * for byte what `git index-pack` writes for the same pack (test/git/pack-scan-index.test.ts).
 */
import { createHash } from 'node:crypto';
import CRC32 from 'crc-32';
import { describeLimit, type GitFetchLimits } from './git-fetch-limits.js';
import { RecentObjects } from './recent-objects.js';
import {
  applyDelta,
  deltaSizes,
  inflatePackEntry,
  OID_BYTES,
  PACK_HEADER_BYTES,
  PACK_OBJECT_TYPES,
  readPackEntryHeader,
  type PackEntryHeader,
  type PackObject,
} from './pack-format.js';

/** What the resolved objects kept as delta bases may weigh: a base is inflated again past it. */
const BASE_CACHE_BYTES = 32 * 1024 * 1024;

/** How long the pass runs before it lets the event loop go. */
const SLICE_MS = 8;

/** The largest offset a version 2 index holds in its 4-byte table (larger ones need the 8-byte table). */
const MAX_SMALL_OFFSET = 2 ** 31 - 1;

export interface PackScan {
  /** Why the pack must not enter the cache: the first limit it breaks, or what makes it no pack. */
  readonly refusal?: string;
  /** Its `.idx`, when asked for and the pack is one this index takes (see indexer). */
  readonly index?: Buffer;
}

export interface PackScanOptions {
  /** Make the pack's index too. */
  readonly index: boolean;
  /** @internal test seam: a smaller cache of bases, so that bases are inflated again */
  readonly baseCacheBytes?: number;
}

/** Checks `pack` against `limits` entry by entry, and indexes it as it goes if asked to. */
export async function scanPack(
  pack: Uint8Array,
  limits: GitFetchLimits,
  options: PackScanOptions,
): Promise<PackScan> {
  const bytes = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  if (bytes.length < PACK_HEADER_BYTES || bytes.toString('latin1', 0, 4) !== 'PACK') {
    return { refusal: 'the server sent something that is not a Git pack' };
  }
  const count = bytes.readUInt32BE(8);
  if (count > limits.maxFetchObjects) {
    return {
      refusal: `the pack holds ${count} objects, more than the ${describeLimit(limits, 'maxFetchObjects')} one fetch may bring`,
    };
  }
  let indexer = options.index
    ? createIndexer(bytes, count, options.baseCacheBytes ?? BASE_CACHE_BYTES)
    : undefined;
  let offset = PACK_HEADER_BYTES;
  let sliceStart = performance.now();
  for (let index = 0; index < count; index += 1) {
    const header = readPackEntryHeader(bytes, offset);
    if (header === undefined) return { refusal: `entry ${index + 1} of the pack is cut short` };
    const type = PACK_OBJECT_TYPES[header.type];
    if (type === undefined) {
      return { refusal: `entry ${index + 1} of the pack has the unknown type ${header.type}` };
    }
    if (header.size > limits.maxObjectBytes) {
      return {
        refusal: `a ${type} object of ${header.size} bytes is larger than the ${describeLimit(limits, 'maxObjectBytes')} an object may have`,
      };
    }
    const inflated = inflatePackEntry(bytes, header.dataOffset, header.size);
    if (inflated === undefined) {
      return {
        refusal: `entry ${index + 1} of the pack does not inflate to the ${header.size} bytes its header declares`,
      };
    }
    if (type.endsWith('delta')) {
      const result = deltaSizes(inflated.data)?.result;
      if (result === undefined)
        return { refusal: `entry ${index + 1} of the pack is a delta without its sizes` };
      if (result > limits.maxObjectBytes) {
        return {
          refusal: `a delta makes an object of ${result} bytes, larger than the ${describeLimit(limits, 'maxObjectBytes')} an object may have`,
        };
      }
    }
    const next = header.dataOffset + inflated.consumed;
    if (indexer?.add(offset, header, type, inflated.data, next) === false) indexer = undefined;
    offset = next;
    if ((index & 255) === 255 && performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resume) => setImmediate(resume));
      sliceStart = performance.now();
    }
  }
  return { index: indexer?.finish(offset) };
}

interface Entry {
  readonly offset: number;
  /** commit, tree, blob or tag: a delta's is its base's. */
  readonly type: string;
  readonly dataOffset: number;
  readonly size: number;
  readonly baseOffset: number | undefined;
}

interface Indexer {
  /** Takes the entry read at `offset` (inflated, and ending at `next`); false once the pack is left to the library. */
  add(offset: number, header: PackEntryHeader, type: string, data: Buffer, next: number): boolean;
  /** The index, when the entries ended at the pack's checksum. */
  finish(offset: number): Buffer | undefined;
}

/**
 * The index of the pack's entries as they are read, or undefined where this index leaves the pack to
 * isomorphic-git: a ref-delta (a base named by its oid, which a server sends only without the
 * ofs-delta capability, or in a thin pack), an offset past 2 GiB, or anything malformed (the library
 * then reports it as before). The pack's trailing checksum is checked first: a pack that does not match
 * it is not indexed here either.
 */
function createIndexer(bytes: Buffer, count: number, baseCacheBytes: number): Indexer | undefined {
  const version = bytes.readUInt32BE(4);
  if ((version !== 2 && version !== 3) || bytes.length < PACK_HEADER_BYTES + OID_BYTES) return undefined;
  const end = bytes.length - OID_BYTES;
  const checksum = bytes.subarray(end);
  if (!createHash('sha1').update(bytes.subarray(0, end)).digest().equals(checksum)) return undefined;

  const entries = new Map<number, Entry>();
  const oids: Buffer[] = [];
  const crcs = new Uint32Array(count);
  const offsets: number[] = [];
  const bases = new RecentObjects(baseCacheBytes);

  /**
   * The object at an entry already read. Deltas come after their bases, and each object is kept for
   * the deltas that may follow it; a base pushed out of the cache is inflated again, with its own
   * bases, down the chain to the nearest kept or whole object (a loop, however long the chain).
   */
  const resolve = (entry: Entry, data: Buffer): PackObject | undefined => {
    const chain: Entry[] = [];
    let base: PackObject | undefined;
    for (let link: Entry | undefined = entry; link !== undefined; ) {
      base = link === entry ? undefined : bases.get(link.offset);
      if (base !== undefined) break;
      chain.push(link);
      link = link.baseOffset === undefined ? undefined : entries.get(link.baseOffset);
    }
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const link = chain[i]!;
      const own = i === 0 ? data : inflatePackEntry(bytes, link.dataOffset, link.size)?.data;
      if (own === undefined) return undefined;
      if (link.baseOffset === undefined) {
        base = { type: link.type, content: own };
      } else {
        const content = base === undefined ? undefined : applyDelta(base.content, own);
        if (content === undefined) return undefined;
        base = { type: link.type, content };
      }
      bases.set(link.offset, base);
    }
    return base;
  };

  return {
    add(offset, header, type, data, next) {
      if (type === 'ref-delta' || offset > MAX_SMALL_OFFSET || next > end) return false;
      const baseOffset = header.baseDistance === undefined ? undefined : offset - header.baseDistance;
      const baseEntry = baseOffset === undefined ? undefined : entries.get(baseOffset);
      if (baseOffset !== undefined && baseEntry === undefined) return false;
      const entry: Entry = {
        offset,
        type: baseEntry?.type ?? type,
        dataOffset: header.dataOffset,
        size: header.size,
        baseOffset,
      };
      entries.set(offset, entry);
      const resolved = resolve(entry, data);
      if (resolved === undefined) return false;
      crcs[oids.length] = CRC32.buf(bytes.subarray(offset, next)) >>> 0;
      oids.push(objectId(resolved));
      offsets.push(offset);
      return true;
    },
    finish(offset) {
      return offset === end ? indexBytes(oids, crcs, offsets, checksum) : undefined;
    },
  };
}

/** A Git object's oid: the SHA-1 of `<type> <size>\0` and its content. */
function objectId({ type, content }: PackObject): Buffer {
  return createHash('sha1').update(`${type} ${content.length}\0`, 'latin1').update(content).digest();
}

function indexBytes(
  oids: readonly Buffer[],
  crcs: Uint32Array,
  offsets: readonly number[],
  packChecksum: Buffer,
): Buffer {
  const count = oids.length;
  // One byte per character: strings compare as the oids' bytes do, and faster than Buffer.compare.
  const keys = oids.map((oid) => oid.toString('latin1'));
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
  const out = Buffer.alloc(8 + 256 * 4 + count * (OID_BYTES + 8) + 2 * OID_BYTES);
  out.write('ff744f6300000002', 0, 'hex');
  const fanout = new Uint32Array(256);
  for (const oid of oids) fanout[oid[0]!]! += 1;
  let running = 0;
  for (let i = 0; i < 256; i += 1) {
    running += fanout[i]!;
    out.writeUInt32BE(running, 8 + i * 4);
  }
  const oidsAt = 8 + 256 * 4;
  const crcsAt = oidsAt + count * OID_BYTES;
  const offsetsAt = crcsAt + count * 4;
  order.forEach((entry, position) => {
    oids[entry]!.copy(out, oidsAt + position * OID_BYTES);
    out.writeUInt32BE(crcs[entry]!, crcsAt + position * 4);
    out.writeUInt32BE(offsets[entry]!, offsetsAt + position * 4);
  });
  const checksumAt = offsetsAt + count * 4;
  packChecksum.copy(out, checksumAt);
  createHash('sha1')
    .update(out.subarray(0, checksumAt + OID_BYTES))
    .digest()
    .copy(out, checksumAt + OID_BYTES);
  return out;
}
