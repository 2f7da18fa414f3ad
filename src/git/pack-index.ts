/**
 * The index (`.idx`, version 2) of a received pack, made with Node's zlib and crypto. isomorphic-git
 * indexes a fetched pack in JavaScript: every object inflated by pako, hashed through WebCrypto one
 * promise at a time, and the index's fan-out table counted with a pass over all oids for each of its
 * 256 rows. For a repository of 50,000 objects (10,000 ApplySets of four files) that took 12.7 s of CPU
 * and held the event loop for 5.4 s at a stretch, longer than the leader Lease's renew deadline allows
 * at a few times that size (docs/performance.md). Here the same index takes a pass over the pack, with
 * the event loop let go every few milliseconds.
 *
 * The format (`Documentation/gitformat-pack.txt`): a magic number and version 2, a fan-out table of 256
 * counts (objects whose oid's first byte is at most i), the oids sorted, each one's CRC-32 of its raw
 * entry, each one's offset in the pack, the pack's checksum and the index's own. The result is byte for
 * byte what `git index-pack` writes for the same pack (test/git/pack-index.test.ts).
 */
import { createHash } from 'node:crypto';
import CRC32 from 'crc-32';
import { RecentObjects } from './recent-objects.js';
import {
  applyDelta,
  inflatePackEntry,
  OID_BYTES,
  PACK_HEADER_BYTES,
  PACK_OBJECT_TYPES,
  readPackEntryHeader,
  type PackObject,
} from './pack-format.js';

/** What the resolved objects kept as delta bases may weigh: a base is inflated again past it. */
const BASE_CACHE_BYTES = 32 * 1024 * 1024;

/** How long the indexing runs before it lets the event loop go. */
const SLICE_MS = 8;

/** The largest offset a version 2 index holds in its 4-byte table (larger ones need the 8-byte table). */
const MAX_SMALL_OFFSET = 2 ** 31 - 1;

interface Entry {
  readonly offset: number;
  /** commit, tree, blob or tag: a delta's is its base's. */
  readonly type: string;
  readonly dataOffset: number;
  readonly size: number;
  readonly baseOffset: number | undefined;
}

/**
 * The `.idx` of `pack`, or undefined where this index leaves the pack to isomorphic-git: a ref-delta
 * (a base named by its oid, which a server sends only without the ofs-delta capability, or in a thin
 * pack), an offset past 2 GiB, or anything malformed (the library then reports it as before). The pack's
 * trailing checksum is checked: a pack that does not match it is not indexed here either.
 */
export async function indexPack(
  pack: Uint8Array,
  /** @internal test seam: a smaller cache of bases, so that bases are inflated again */
  baseCacheBytes = BASE_CACHE_BYTES,
): Promise<Buffer | undefined> {
  const bytes = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  if (bytes.length < PACK_HEADER_BYTES + OID_BYTES || bytes.toString('latin1', 0, 4) !== 'PACK')
    return undefined;
  const version = bytes.readUInt32BE(4);
  if (version !== 2 && version !== 3) return undefined;
  const end = bytes.length - OID_BYTES;
  const checksum = bytes.subarray(end);
  if (!createHash('sha1').update(bytes.subarray(0, end)).digest().equals(checksum)) return undefined;

  const count = bytes.readUInt32BE(8);
  const entries = new Map<number, Entry>();
  const oids: Buffer[] = [];
  const crcs = new Uint32Array(count);
  const offsets: number[] = [];
  const bases = new RecentObjects(baseCacheBytes);

  /** The object at an entry already read: from the cache of bases, else inflated (and its base's) again. */
  const resolve = (entry: Entry, data?: Buffer): PackObject | undefined => {
    const kept = bases.get(entry.offset);
    if (kept !== undefined) return kept;
    const own = data ?? inflatePackEntry(bytes, entry.dataOffset, entry.size)?.data;
    if (own === undefined) return undefined;
    let resolved: PackObject | undefined = { type: entry.type, content: own };
    if (entry.baseOffset !== undefined) {
      const baseEntry = entries.get(entry.baseOffset);
      const base = baseEntry === undefined ? undefined : resolve(baseEntry);
      const content = base === undefined ? undefined : applyDelta(base.content, own);
      resolved = content === undefined ? undefined : { type: entry.type, content };
    }
    // Deltas come after their bases in a pack: an object is kept for the deltas that may follow.
    if (resolved !== undefined) bases.set(entry.offset, resolved);
    return resolved;
  };

  let offset = PACK_HEADER_BYTES;
  let sliceStart = performance.now();
  for (let index = 0; index < count; index += 1) {
    const header = readPackEntryHeader(bytes, offset);
    const kind = header === undefined ? undefined : PACK_OBJECT_TYPES[header.type];
    if (header === undefined || kind === undefined || kind === 'ref-delta' || offset > MAX_SMALL_OFFSET) {
      return undefined;
    }
    const inflated = inflatePackEntry(bytes, header.dataOffset, header.size);
    if (inflated === undefined) return undefined;
    const baseOffset = header.baseDistance === undefined ? undefined : offset - header.baseDistance;
    const baseEntry = baseOffset === undefined ? undefined : entries.get(baseOffset);
    if (baseOffset !== undefined && baseEntry === undefined) return undefined;
    const entry: Entry = {
      offset,
      type: baseEntry?.type ?? kind,
      dataOffset: header.dataOffset,
      size: header.size,
      baseOffset,
    };
    entries.set(offset, entry);
    const resolved = resolve(entry, inflated.data);
    if (resolved === undefined) return undefined;
    const next = header.dataOffset + inflated.consumed;
    if (next > end) return undefined;
    oids.push(objectId(resolved));
    crcs[index] = CRC32.buf(bytes.subarray(offset, next)) >>> 0;
    offsets.push(offset);
    offset = next;
    if ((index & 255) === 255 && performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resume) => setImmediate(resume));
      sliceStart = performance.now();
    }
  }
  if (offset !== end) return undefined;
  return indexBytes(oids, crcs, offsets, checksum);
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
