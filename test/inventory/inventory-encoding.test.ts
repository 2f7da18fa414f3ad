import { gunzipSync, gzipSync } from 'node:zlib';
import { formatInventory } from '../../src/inventory/format-inventory.js';
import {
  annotationBytes,
  COMPRESSED_INVENTORY_KEY,
  COMPRESSED_MARKER,
  CompressedInventoryError,
  decodeInventory,
  encodeInventory,
  InventoryPastLimitError,
  MAX_INVENTORY_LINES,
  MAX_INVENTORY_TEXT_BYTES,
  PLAIN_LIMIT_BYTES,
  TOTAL_ANNOTATION_LIMIT_BYTES,
} from '../../src/inventory/inventory-encoding.js';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { InventoryParseError, parseInventory } from '../../src/inventory/parse-inventory.js';

const PLAIN = MetadataKeys.lastAppliedObjects;

function configMaps(count: number, namespace = 'team-a') {
  return Array.from({ length: count }, (_, i) => ({
    namespace,
    group: '',
    kind: 'ConfigMap',
    name: `settings-${String(i).padStart(6, '0')}`,
  }));
}

describe('the inventory encoding', () => {
  it('writes a small set exactly as kubectl does, with the compressed key removed', () => {
    const text = formatInventory(configMaps(100));
    expect(encodeInventory(text)).toEqual({ [PLAIN]: text, [COMPRESSED_INVENTORY_KEY]: null });
    expect(decodeInventory({ [PLAIN]: text })).toBe(text);
  });

  it('compresses a set past the plain limit, deterministically, and reads it back', () => {
    const text = formatInventory(configMaps(20_000));
    expect(Buffer.byteLength(text)).toBeGreaterThan(PLAIN_LIMIT_BYTES);
    const encoded = encodeInventory(text);
    expect(encoded[PLAIN]).toBe(COMPRESSED_MARKER);
    expect(encoded).toEqual(encodeInventory(text));
    expect(gunzipSync(Buffer.from(encoded[COMPRESSED_INVENTORY_KEY] ?? '', 'base64')).toString()).toBe(text);
    expect(
      decodeInventory({ ...encoded, [COMPRESSED_INVENTORY_KEY]: encoded[COMPRESSED_INVENTORY_KEY] ?? '' }),
    ).toBe(text);
  });

  it('keeps 20,000 objects well under the server limit on all annotations', () => {
    const encoded = encodeInventory(formatInventory(configMaps(20_000)));
    expect(annotationBytes(encoded)).toBeLessThan(TOTAL_ANNOTATION_LIMIT_BYTES / 2);
  });

  it('makes an older reader of the plain format refuse the set, not read it as empty', () => {
    const encoded = encodeInventory(formatInventory(configMaps(20_000)));
    expect(() => parseInventory(encoded[PLAIN])).toThrow(InventoryParseError);
  });

  it('refuses a marker without its list, and a list that is not gzip', () => {
    expect(() => decodeInventory({ [PLAIN]: COMPRESSED_MARKER })).toThrow(CompressedInventoryError);
    expect(() =>
      decodeInventory({ [PLAIN]: COMPRESSED_MARKER, [COMPRESSED_INVENTORY_KEY]: 'bm90IGd6aXA=' }),
    ).toThrow(/not a gzip'ed list/);
  });

  it('refuses a gzip bomb by the bytes it inflates to, without inflating it whole', () => {
    // 180 gzip members of 1 MiB of newlines each: about 180 KB packed, 180 MiB inflated.
    const member = gzipSync(Buffer.alloc(1024 * 1024, '\n'), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 180 }, () => member)).toString('base64');
    expect(bomb.length).toBeLessThan(TOTAL_ANNOTATION_LIMIT_BYTES);
    const decode = () => decodeInventory({ [PLAIN]: COMPRESSED_MARKER, [COMPRESSED_INVENTORY_KEY]: bomb });
    expect(decode).toThrow(InventoryPastLimitError);
    expect(decode).toThrow(
      `annotation ${COMPRESSED_INVENTORY_KEY} decompresses past 8 MiB; nothing was applied or pruned`,
    );
    expect(MAX_INVENTORY_TEXT_BYTES).toBe(8 * 1024 * 1024);
  });

  it('refuses an inventory of more lines than the limit, compressed or plain, and takes one of exactly that many', () => {
    const lines = (count: number) => 'a::ConfigMap:b\n'.repeat(count - 1) + 'a::ConfigMap:b';
    const packed = (text: string) => gzipSync(Buffer.from(text)).toString('base64');
    const atLimit = lines(MAX_INVENTORY_LINES);
    expect(decodeInventory({ [PLAIN]: COMPRESSED_MARKER, [COMPRESSED_INVENTORY_KEY]: packed(atLimit) })).toBe(
      atLimit,
    );
    expect(() =>
      decodeInventory({ [PLAIN]: COMPRESSED_MARKER, [COMPRESSED_INVENTORY_KEY]: packed(`${atLimit}\n`) }),
    ).toThrow(`annotation ${COMPRESSED_INVENTORY_KEY} holds more than ${MAX_INVENTORY_LINES} lines`);
    expect(() => decodeInventory({ [PLAIN]: '\n'.repeat(MAX_INVENTORY_LINES) })).toThrow(
      expect.objectContaining({ reason: 'InventoryTooLarge', intent: 'stalled' }) as Error,
    );
  });

  it('leaves room for anything this controller can write: a set past the server limit is within both', () => {
    // Sequential names compress best: this is about the most objects the 256 KiB allow.
    const text = formatInventory(configMaps(90_000));
    expect(annotationBytes(encodeInventory(text))).toBeGreaterThan(TOTAL_ANNOTATION_LIMIT_BYTES);
    expect(Buffer.byteLength(text) * 2).toBeLessThan(MAX_INVENTORY_TEXT_BYTES);
    expect(90_000 * 2).toBeLessThan(MAX_INVENTORY_LINES);
  });
});
