import { describeLimit, type GitFetchLimits } from './git-fetch-limits.js';
import {
  deltaSizes,
  inflatePackEntry,
  PACK_HEADER_BYTES,
  PACK_OBJECT_TYPES,
  readPackEntryHeader,
} from './pack-format.js';

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
    const entry = readPackEntryHeader(bytes, offset);
    if (entry === undefined) return `entry ${index + 1} of the pack is cut short`;
    const type = PACK_OBJECT_TYPES[entry.type];
    if (type === undefined) return `entry ${index + 1} of the pack has the unknown type ${entry.type}`;
    if (entry.size > limits.maxObjectBytes) {
      return `a ${type} object of ${entry.size} bytes is larger than the ${describeLimit(limits, 'maxObjectBytes')} an object may have`;
    }
    const inflated = inflatePackEntry(bytes, entry.dataOffset, entry.size);
    if (inflated === undefined) {
      return `entry ${index + 1} of the pack does not inflate to the ${entry.size} bytes its header declares`;
    }
    if (type.endsWith('delta')) {
      const result = deltaSizes(inflated.data)?.result;
      if (result === undefined) return `entry ${index + 1} of the pack is a delta without its sizes`;
      if (result > limits.maxObjectBytes) {
        return `a delta makes an object of ${result} bytes, larger than the ${describeLimit(limits, 'maxObjectBytes')} an object may have`;
      }
    }
    offset = entry.dataOffset + inflated.consumed;
  }
  return undefined;
}
