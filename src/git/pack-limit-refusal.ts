import { inflateSync } from 'node:zlib';
import { describeLimit, type GitFetchLimits } from './git-fetch-limits.js';

/** Git's pack object types (`Documentation/gitformat-pack.txt`). */
const OBJECT_TYPES: Readonly<Record<number, string>> = {
  1: 'commit',
  2: 'tree',
  3: 'blob',
  4: 'tag',
  6: 'ofs-delta',
  7: 'ref-delta',
};

const PACK_HEADER_BYTES = 12;
const OID_BYTES = 20;

/**
 * Why a received pack must not enter the cache, or undefined. Each entry's header declares its
 * inflated size, which is checked before a byte of it is inflated; a delta's result size is the second
 * number of its inflated delta data, itself no larger than the delta's declared size. An entry is
 * inflated (to find where the next begins) only once its size has passed, and never past the size it
 * declared, so a stream that inflates to more than its header says is refused too, not trusted.
 * The scan runs over the whole pack, which isomorphic-git holds in memory anyway (it is bounded by
 * `maxFetchBytes`): at most one object of `maxObjectBytes` is inflated at a time, and dropped.
 */
export function packLimitRefusal(pack: Uint8Array, limits: GitFetchLimits): string | undefined {
  const bytes = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  if (bytes.length < PACK_HEADER_BYTES || bytes.toString('latin1', 0, 4) !== 'PACK') {
    return 'the server sent something that is not a Git pack';
  }
  const count = bytes.readUInt32BE(8);
  if (count > limits.maxFetchObjects) {
    return `the pack holds ${count} objects, more than the ${describeLimit(limits, 'maxFetchObjects')} one fetch may bring`;
  }
  let offset = PACK_HEADER_BYTES;
  for (let index = 0; index < count; index += 1) {
    const entry = readEntryHeader(bytes, offset);
    if (entry === undefined) return `entry ${index + 1} of the pack is cut short`;
    const type = OBJECT_TYPES[entry.type];
    if (type === undefined) return `entry ${index + 1} of the pack has the unknown type ${entry.type}`;
    if (entry.size > limits.maxObjectBytes) {
      return `a ${type} object of ${entry.size} bytes is larger than the ${describeLimit(limits, 'maxObjectBytes')} an object may have`;
    }
    let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
    try {
      inflated = inflateSync(bytes.subarray(entry.dataOffset), {
        info: true,
        // One more byte than declared: a stream that reaches it says more than its header did.
        maxOutputLength: entry.size + 1,
      }) as unknown as typeof inflated;
    } catch {
      return `entry ${index + 1} of the pack does not inflate to the ${entry.size} bytes its header declares`;
    }
    if (inflated.buffer.length !== entry.size) {
      return `entry ${index + 1} of the pack does not inflate to the ${entry.size} bytes its header declares`;
    }
    if (type.endsWith('delta')) {
      const result = deltaResultSize(inflated.buffer);
      if (result === undefined) return `entry ${index + 1} of the pack is a delta without its sizes`;
      if (result > limits.maxObjectBytes) {
        return `a delta makes an object of ${result} bytes, larger than the ${describeLimit(limits, 'maxObjectBytes')} an object may have`;
      }
    }
    offset = entry.dataOffset + inflated.engine.bytesWritten;
  }
  return undefined;
}

interface EntryHeader {
  readonly type: number;
  /** The inflated size of the entry's data (of the delta itself, for a delta). */
  readonly size: number;
  /** Where the entry's zlib stream starts. */
  readonly dataOffset: number;
}

/** The type-and-size header of the entry at `offset`, and a delta's base reference skipped. */
function readEntryHeader(bytes: Buffer, offset: number): EntryHeader | undefined {
  let position = offset;
  let byte = bytes[position];
  if (byte === undefined) return undefined;
  position += 1;
  const type = (byte >> 4) & 7;
  let size = byte & 15;
  let scale = 16;
  while ((byte & 0x80) !== 0) {
    byte = bytes[position];
    if (byte === undefined) return undefined;
    position += 1;
    size += (byte & 0x7f) * scale;
    scale *= 128;
  }
  // Past 2^53 a size is no longer exact (and endless 0x80 bytes would make it NaN): no limit is near it.
  if (scale > 2 ** 53) size = Infinity;
  if (type === 6) {
    // The base's negative offset: a varint ending at the first byte without its high bit.
    while (bytes[position] !== undefined && (bytes[position]! & 0x80) !== 0) position += 1;
    position += 1;
  } else if (type === 7) {
    position += OID_BYTES;
  }
  return position > bytes.length ? undefined : { type, size, dataOffset: position };
}

/** A delta's result size: the second of the two little-endian base-128 numbers it starts with. */
function deltaResultSize(delta: Buffer): number | undefined {
  let position = 0;
  const next = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = delta[position];
      if (byte === undefined) return undefined;
      position += 1;
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) return scale > 2 ** 53 ? Infinity : value;
    }
  };
  return next() === undefined ? undefined : next();
}
