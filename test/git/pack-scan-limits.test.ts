import { deflateSync } from 'node:zlib';
import { DEFAULT_GIT_FETCH_LIMITS, type GitFetchLimits } from '../../src/git/git-fetch-limits.js';
import { scanPack } from '../../src/git/pack-scan.js';

// Packs built byte by byte as Documentation/gitformat-pack.txt lays them out, so an entry can declare
// any size whatever its data inflates to: what a hostile server can send.

const limits: GitFetchLimits = { maxObjectBytes: 1000, maxFetchBytes: 1 << 20, maxFetchObjects: 10 };

/** An entry's type-and-size header. */
function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let rest = Math.floor(size / 16);
  let byte = (type << 4) | size % 16;
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest % 128;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  do {
    const low = rest % 128;
    rest = Math.floor(rest / 128);
    bytes.push(rest > 0 ? low | 0x80 : low);
  } while (rest > 0);
  return bytes;
}

interface Entry {
  readonly type: number;
  /** What the header declares; the data's length when not given. */
  readonly declared?: number;
  readonly data: Buffer;
  /** A ref-delta's base. */
  readonly base?: Buffer;
}

function pack(entries: readonly Entry[], count = entries.length): Buffer {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(count, 8);
  const parts = entries.flatMap((entry) => [
    entryHeader(entry.type, entry.declared ?? entry.data.length),
    entry.base ?? Buffer.alloc(0),
    deflateSync(entry.data),
  ]);
  return Buffer.concat([header, ...parts, Buffer.alloc(20)]);
}

const blob = (text: string): Entry => ({ type: 3, data: Buffer.from(text) });

/** Why scanPack refuses `bytes`, indexing it or not: the two must agree. */
async function refusalOf(bytes: Buffer, within: GitFetchLimits): Promise<string | undefined> {
  const checked = await scanPack(bytes, within, { index: false });
  const indexed = await scanPack(bytes, within, { index: true });
  expect(indexed.refusal).toBe(checked.refusal);
  if (checked.refusal !== undefined) expect(indexed.index).toBeUndefined();
  return checked.refusal;
}

describe('scanPack, limits', () => {
  it('accepts a pack of objects within the limits, deltas included', async () => {
    const delta = Buffer.from([...varint(5), ...varint(900), 0x90, 5]);
    const entries = [blob('hello'), blob('x'.repeat(1000)), { type: 7, data: delta, base: Buffer.alloc(20) }];
    expect(await refusalOf(pack(entries), limits)).toBeUndefined();
  });

  it('refuses a pack that holds more objects than the limit, by its header alone', async () => {
    expect(await refusalOf(pack([blob('a')], 100_000), limits)).toBe(
      'the pack holds 100000 objects, more than the 10 objects (--git-max-fetch-objects) one fetch may bring',
    );
  });

  it('refuses an object by the size its header declares, before inflating it', async () => {
    // A header that claims 1 GiB over a few bytes of data: only the header is read.
    const entries = [blob('fine'), { type: 3, declared: 1 << 30, data: Buffer.from('tiny') }];
    expect(await refusalOf(pack(entries), limits)).toBe(
      'a blob object of 1073741824 bytes is larger than the 1000 bytes (--git-max-object-bytes) an object may have',
    );
  });

  it('refuses a delta whose result is larger than the limit', async () => {
    const delta = Buffer.from([...varint(5), ...varint(64 << 20), 0x90, 5]);
    expect(await refusalOf(pack([{ type: 7, data: delta, base: Buffer.alloc(20) }]), limits)).toBe(
      'a delta makes an object of 67108864 bytes, larger than the 1000 bytes (--git-max-object-bytes) an object may have',
    );
  });

  it('refuses an entry that inflates to more than its header declares', async () => {
    const bomb = { type: 3, declared: 10, data: Buffer.alloc(1 << 20) };
    expect(await refusalOf(pack([bomb]), DEFAULT_GIT_FETCH_LIMITS)).toBe(
      'entry 1 of the pack does not inflate to the 10 bytes its header declares',
    );
  });

  it('refuses what is not a pack, and a pack cut short', async () => {
    expect(await refusalOf(Buffer.from('<html>'), limits)).toBe(
      'the server sent something that is not a Git pack',
    );
    expect(await refusalOf(pack([blob('a')], 2).subarray(0, -20), limits)).toBe(
      'entry 2 of the pack is cut short',
    );
  });
});
