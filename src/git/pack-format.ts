/**
 * The parts of Git's pack format (`Documentation/gitformat-pack.txt`) that the controller reads itself:
 * each entry's header, its zlib stream, and a delta's instructions. Shared by the check of a received
 * pack's limits and index (scanPack) and the reads of its objects
 * (createPackObjectStore).
 */

import { inflateSync } from 'node:zlib';

/** An object read from a pack: commit, tree, blob or tag (a delta's is its base's), and its content. */
export interface PackObject {
  readonly type: string;
  readonly content: Buffer;
}

/** Git's pack object types. */
export const PACK_OBJECT_TYPES: Readonly<Record<number, string>> = {
  1: 'commit',
  2: 'tree',
  3: 'blob',
  4: 'tag',
  6: 'ofs-delta',
  7: 'ref-delta',
};

export const PACK_HEADER_BYTES = 12;
export const OID_BYTES = 20;

export interface PackEntryHeader {
  readonly type: number;
  /** The inflated size of the entry's data (of the delta itself, for a delta). */
  readonly size: number;
  /** Where the entry's zlib stream starts. */
  readonly dataOffset: number;
  /** An ofs-delta's base: how many bytes before this entry's own offset it starts. */
  readonly baseDistance?: number;
}

/** The type-and-size header of the entry at `offset`, with a delta's base reference. */
export function readPackEntryHeader(bytes: Uint8Array, offset: number): PackEntryHeader | undefined {
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
    // The base's negative offset, big-endian base-128 where each continuation adds one (so that no
    // two encodings mean the same distance).
    byte = bytes[position];
    if (byte === undefined) return undefined;
    position += 1;
    let distance = byte & 0x7f;
    while ((byte & 0x80) !== 0) {
      byte = bytes[position];
      if (byte === undefined) return undefined;
      position += 1;
      distance = (distance + 1) * 128 + (byte & 0x7f);
    }
    return position > bytes.length ? undefined : { type, size, dataOffset: position, baseDistance: distance };
  }
  if (type === 7) position += OID_BYTES;
  return position > bytes.length ? undefined : { type, size, dataOffset: position };
}

/** A delta's two sizes (base, result): little-endian base-128 numbers at its start; and where they end. */
export function deltaSizes(delta: Uint8Array): { base: number; result: number; end: number } | undefined {
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
  const base = next();
  const result = base === undefined ? undefined : next();
  return result === undefined || base === undefined ? undefined : { base, result, end: position };
}

/**
 * The object a delta makes of its base: copies of the base's ranges and literal inserts, in order.
 * Undefined when the delta does not fit its base (a size or a range past its end, the reserved
 * instruction 0) or makes other than the size it declares.
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Buffer | undefined {
  const sizes = deltaSizes(delta);
  if (sizes === undefined || sizes.base !== base.length || !Number.isSafeInteger(sizes.result))
    return undefined;
  const out = Buffer.allocUnsafe(sizes.result);
  let written = 0;
  let position = sizes.end;
  while (position < delta.length) {
    const op = delta[position++]!;
    if ((op & 0x80) !== 0) {
      // A copy: the offset's and the size's bytes are present only where op's bits say so.
      let start = 0;
      let length = 0;
      for (let bit = 0; bit < 4; bit += 1) {
        if ((op & (1 << bit)) !== 0) start += (delta[position++] ?? 0) * 2 ** (8 * bit);
      }
      for (let bit = 0; bit < 3; bit += 1) {
        if ((op & (16 << bit)) !== 0) length += (delta[position++] ?? 0) * 2 ** (8 * bit);
      }
      if (length === 0) length = 0x10000;
      if (position > delta.length || start + length > base.length || written + length > out.length) {
        return undefined;
      }
      out.set(base.subarray(start, start + length), written);
      written += length;
    } else if (op !== 0) {
      if (position + op > delta.length || written + op > out.length) return undefined;
      out.set(delta.subarray(position, position + op), written);
      written += op;
      position += op;
    } else {
      return undefined;
    }
  }
  return written === out.length ? out : undefined;
}

/** An entry's zlib stream inflated, and how many bytes of the pack it took; undefined unless it is `size` long. */
export function inflatePackEntry(
  bytes: Buffer,
  dataOffset: number,
  size: number,
): { data: Buffer; consumed: number } | undefined {
  try {
    const { buffer, engine } = inflateSync(bytes.subarray(dataOffset), {
      info: true,
      // One byte more than declared: a stream that reaches it says more than its header did.
      maxOutputLength: size + 1,
      // An output buffer of the object's size: with the default 16 KiB, each small object kept would
      // hold a 16 KiB buffer of which it is a slice.
      chunkSize: Math.max(64, Math.min(size + 1, 64 * 1024)),
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    return buffer.length === size ? { data: buffer, consumed: engine.bytesWritten } : undefined;
  } catch {
    return undefined;
  }
}
